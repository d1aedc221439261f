// Questions on the terminal stay visible: a plain `${input:…}` prompt (no password) was
// written, then erased by readline's redraw (ESC[1G ESC[0J) before anything was typed. And
// with stdout and stderr piped but a terminal on stdin, the question is asked on the terminal.
import * as cp from "node:child_process"
import { afterAll, describe, expect, it } from "vitest"
import {
  CLI,
  cliEnv,
  FIXTURES,
  hasScript,
  leavesNothing,
  MARK,
  marked,
  runOnTerminal,
  tempDir
} from "../support/cli.js"

const mark = `cli-prompt-${process.pid}-${Date.now()}`

afterAll(() => leavesNothing(mark))

const cwd = tempDir({
  ".mcp.json": JSON.stringify({
    inputs: [{ type: "promptString", id: "project", description: "The project name" }],
    mcpServers: {
      env: marked({ command: process.execPath, args: [FIXTURES.env], env: { TOKEN: "${input:project}" } }, mark)
    }
  })
})

const QUESTION = "The project name (${input:project}; or set MCP_FLEET_INPUT_PROJECT): "

// What a terminal shows of raw output: each line as it stands after carriage returns, moves
// to a column (ESC[nG) and erasures to the end (ESC[0J, ESC[K); other sequences ignored.
const screen = (raw: string): string =>
  raw.split(/\r?\n/).map((line) => {
    let text = ""
    let column = 0
    // eslint-disable-next-line no-control-regex -- terminal sequences
    for (const token of line.split(/(\x1b\[[0-9;?]*[A-Za-z]|\r)/)) {
      // eslint-disable-next-line no-control-regex -- terminal sequences
      const move = /^\x1b\[(\d*)G$/.exec(token)
      if (token === "\r") column = 0
      else if (move !== null) column = Number(move[1] || "1") - 1
      // eslint-disable-next-line no-control-regex -- terminal sequences
      else if (/^\x1b\[0?[JK]$/.test(token)) text = text.slice(0, column)
      else if (!token.startsWith("\x1b")) {
        text = text.slice(0, column).padEnd(column) + token + text.slice(column + token.length)
        column += token.length
      }
    }
    return text
  }).join("\n")

describe.skipIf(!hasScript)("questions on a terminal", () => {
  it("a plain ${input:…} question stays on the screen, with the answer typed after it", async () => {
    const result = await runOnTerminal(["call", "env", "env"], { cwd, mark }, { shows: QUESTION, answer: "alpha" })
    expect(result.code).toBe(0)
    expect(screen(result.stdout)).toContain(`${QUESTION}alpha`)
  })

  it("with stdout and stderr piped, the question is asked on the terminal", async () => {
    const errors = `${tempDir()}/stderr.txt`
    const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`
    const line = `${[...CLI, "call", "env", "env"].map(quote).join(" ")} 2>${quote(errors)} | cat`
    const child = cp.spawn("script", ["-qec", line, "/dev/null"], {
      cwd,
      env: { ...process.env, ...cliEnv(), NO_COLOR: "1", [MARK]: mark },
      stdio: "pipe"
    })
    let shown = ""
    let typed = false
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      shown += chunk
      if (!typed && shown.includes(QUESTION)) {
        typed = true
        child.stdin.write("beta\n")
      }
    })
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    expect(typed).toBe(true)
    expect(code).toBe(0)
    expect(shown).toContain(`"TOKEN":"beta"`)
  })
})
