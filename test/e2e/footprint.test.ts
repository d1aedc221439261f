/**
 * What the main entry keeps resident: importing it loads no JSON Schema validator. Ajv is
 * loaded when a schema is first compiled (src/internal/jsonSchema.ts), so a client that never
 * checks one does not pay for it. A fresh process, since the test workers share modules.
 */
import * as cp from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** The node_modules/ajv files a fresh process has loaded after importing `entry`. */
const ajvLoadedAfter = (entry: string) =>
  new Promise<number>((resolve, reject) => {
    const program = [
      `import { createRequire } from "node:module"`,
      `await import(${JSON.stringify(entry)})`,
      `const cache = createRequire(process.cwd() + "/").cache`,
      `console.log(Object.keys(cache).filter((file) => file.includes("/node_modules/ajv/")).length)`
    ].join("\n")
    const child = cp.spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", program], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => out += chunk)
    child.once("error", reject)
    child.once("close", (code) => code === 0 ? resolve(Number(out.trim())) : reject(new Error(`exited with ${code}`)))
  })

describe("the main entry's footprint", () => {
  it("loads Ajv only when a schema is compiled, not at import", async () => {
    const [atImport, afterCompile] = await Promise.all([
      ajvLoadedAfter(`${root}src/index.ts`),
      ajvLoadedAfter("ajv")
    ])
    expect(atImport).toBe(0)
    // The check sees Ajv when it is there.
    expect(afterCompile).toBeGreaterThan(0)
  })
})
