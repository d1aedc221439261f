/**
 * FleetConfig: both file formats, variables and secrets, defaults, merging of user and
 * project files, and hot reload against a real temporary directory.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as util from "node:util"
import * as FleetConfig from "../src/FleetConfig.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as ServerSpec from "../src/ServerSpec.js"
import { hangGuard } from "./support/guard.js"
import { Platform } from "./support/platform.js"

// --- helpers ------------------------------------------------------------------------

const tempDirs: Array<string> = []
const makeTempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-config-"))
  tempDirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true })
})

const CONFIG = "/work/project/.mcp.json"

/** Parses JSON text that must be a valid file; returns the servers by name. */
const parseOk = (json: unknown, env: FleetConfig.Env = {}, file = CONFIG) => {
  const text = typeof json === "string" ? json : JSON.stringify(json)
  const result = FleetConfig.parse(text, file, env)
  if (Either.isLeft(result)) throw new Error(`expected a valid file: ${result.left.message}`)
  // Every spec's `origin` is the file (test/ToolPins-identity.test.ts); left out to compare the rest.
  return Object.fromEntries(result.right.map(({ origin: _origin, ...spec }) => [spec.name, spec]))
}

const parseError = (text: string, file = CONFIG) => {
  const result = FleetConfig.parse(text, file, {})
  if (Either.isRight(result)) throw new Error("expected a ConfigError")
  return result.left
}

const stdio = (spec: ServerSpec.ServerSpec) => {
  if (spec.transport.type !== "stdio") throw new Error(`expected stdio, got ${spec.transport.type}`)
  return spec.transport
}

const remote = (spec: ServerSpec.ServerSpec) => {
  if (spec.transport.type !== "http" && spec.transport.type !== "sse") {
    throw new Error(`expected a remote transport, got ${spec.transport.type}`)
  }
  return spec.transport
}

const ms = (input: Duration.DurationInput | undefined) =>
  input === undefined ? undefined : Duration.toMillis(Duration.decode(input))

const writeJson = (file: string, json: unknown) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, typeof json === "string" ? json : JSON.stringify(json, null, 2))
}

// As editors save: write a new file, then rename it over the old one.
let saves = 0
const saveJson = (file: string, json: unknown) => {
  const temporary = `${file}.${process.pid}.${saves++}.tmp`
  writeJson(temporary, json)
  fs.renameSync(temporary, file)
}

// --- formats ------------------------------------------------------------------------

describe("parse: formats", () => {
  it("reads the mcpServers format of Claude Code, Claude Desktop and Cursor", () => {
    const servers = parseOk({
      // Claude Desktop keeps other settings in the same file.
      globalShortcut: "Ctrl+Space",
      mcpServers: {
        filesystem: {
          command: "npx",
          args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
          env: { LOG_LEVEL: "debug" }
        },
        remote: { type: "http", url: "https://mcp.example.com/mcp", headers: { "X-Team": "core" } },
        legacy: { type: "sse", url: "http://localhost:3001/sse" },
        explicit: { type: "stdio", command: "node", args: ["server.js"], autoApprove: ["read"] }
      }
    })
    expect(Object.keys(servers)).toEqual(["filesystem", "remote", "legacy", "explicit"])
    expect(servers.filesystem).toEqual({
      name: "filesystem",
      transport: {
        type: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
        env: { LOG_LEVEL: "debug" }
      }
    })
    expect(servers.remote).toEqual({
      name: "remote",
      transport: { type: "http", url: "https://mcp.example.com/mcp", headers: { "X-Team": "core" } }
    })
    expect(servers.legacy.transport).toEqual({ type: "sse", url: "http://localhost:3001/sse" })
    expect(servers.explicit).toEqual({
      name: "explicit",
      transport: { type: "stdio", command: "node", args: ["server.js"] }
    })
  })

  it("reads a remote server's oauth block, its client secret expanded and Redacted", () => {
    const servers = parseOk({
      mcpServers: {
        linear: {
          url: "https://mcp.linear.app/mcp",
          oauth: { clientId: "fleet", clientSecret: "${LINEAR_SECRET}", scopes: ["read"], callbackPort: 8765 }
        }
      }
    }, { LINEAR_SECRET: "s3cret-value" })
    const oauth = remote(servers.linear).oauth!
    expect({ ...oauth, clientSecret: undefined }).toEqual({
      clientId: "fleet",
      clientSecret: undefined,
      scopes: ["read"],
      callbackPort: 8765
    })
    expect(Redacted.value(oauth.clientSecret!)).toBe("s3cret-value")
    expect(ServerSpec.secrets(servers.linear).map(Redacted.value)).toContain("s3cret-value")
  })

  it("reads oauth.dpop and oauth.enterprise, the ID token and IdP secret expanded, Redacted and masked", () => {
    const servers = parseOk({
      mcpServers: {
        internal: {
          url: "https://mcp.example.com/mcp",
          oauth: {
            clientId: "fleet",
            dpop: true,
            enterprise: {
              idpTokenEndpoint: "https://idp.example.com/token",
              idToken: "${SSO_ID_TOKEN}",
              idpClientId: "fleet-at-idp",
              idpClientSecret: "${IDP_SECRET}"
            }
          }
        }
      }
    }, { SSO_ID_TOKEN: "id-token-value", IDP_SECRET: "idp-secret-value" })
    const oauth = remote(servers.internal).oauth!
    expect(oauth.dpop).toBe(true)
    expect(oauth.enterprise).toMatchObject({
      idpTokenEndpoint: "https://idp.example.com/token",
      idpClientId: "fleet-at-idp"
    })
    expect(Redacted.value(oauth.enterprise!.idToken)).toBe("id-token-value")
    expect(Redacted.value(oauth.enterprise!.idpClientSecret!)).toBe("idp-secret-value")
    expect(ServerSpec.secrets(servers.internal).map(Redacted.value)).toEqual(
      expect.arrayContaining(["id-token-value", "idp-secret-value"])
    )
  })

  it("reads a VS Code .vscode/mcp.json: servers, inputs, comments, ${workspaceFolder}", () => {
    const text = fs.readFileSync(fileURLToPath(new URL("./fixtures/config/vscode-mcp.json", import.meta.url)), "utf8")
    const servers = parseOk(text, { FILES_TOKEN: "t0k3n" }, "/work/app/.vscode/mcp.json")
    expect(Object.keys(servers)).toEqual(["files", "github", "everything", "camel"])
    const files = stdio(servers.files)
    expect(files.args).toEqual(["-y", "@modelcontextprotocol/server-filesystem", "/work/app"])
    expect(Redacted.value(files.env!.TOKEN as Redacted.Redacted<string>)).toBe("t0k3n")
    expect(servers.files.problem).toBeUndefined()

    expect(servers.github.problem).toBe(
      `input "github-token" has no value (\${input:github-token} in headers.Authorization): ` +
        "set MCP_FLEET_INPUT_GITHUB_TOKEN, or run on a terminal to be asked"
    )
    expect(servers.github.transport).toEqual({ type: "http", url: "" })
    const supplied = parseOk(text, { MCP_FLEET_INPUT_GITHUB_TOKEN: "ghp_x" }, "/work/app/.vscode/mcp.json")
    expect(supplied.github.problem).toBeUndefined()
    expect(Redacted.value(remote(supplied.github).headers!.Authorization as Redacted.Redacted<string>))
      .toBe("Bearer ghp_x")

    expect(servers.everything.transport).toEqual({ type: "http", url: "http://localhost:3001/mcp" })
    expect(servers.camel.transport).toEqual({ type: "http", url: "http://localhost:3002/mcp" })
  })

  it("ignores unknown keys at the top and in servers", () => {
    const servers = parseOk({
      mcpServers: { a: { command: "a", autoApprove: ["x"], trust: true } },
      projects: { "/x": {} },
      theme: "dark"
    })
    expect(servers.a).toEqual({ name: "a", transport: { type: "stdio", command: "a" } })
  })

  it("warns of server names that qualified names must change, and still reads them", () => {
    const parsed = Either.getOrThrow(FleetConfig.parseFile(
      JSON.stringify({
        mcpServers: { "my.notes": { command: "a" }, fine_one: { command: "c" } }
      }),
      CONFIG,
      {}
    ))
    expect(parsed.servers.map((spec) => [spec.name, spec.problem])).toEqual([
      ["my.notes", undefined],
      ["fine_one", undefined]
    ])
    expect(parsed.warnings).toEqual([
      `server name 'my.notes' in ${CONFIG} has characters other than letters, digits, _ and -, so its tools are ` +
      "named mcp__my_notes__<tool>"
    ])
  })

  it("reads a file with both mcpServers and servers, and marks a name defined in both", () => {
    const servers = parseOk({
      mcpServers: { a: { command: "a" }, both: { command: "one" } },
      servers: { b: { command: "b" }, both: { command: "two" } }
    })
    expect(Object.keys(servers)).toEqual(["a", "both", "b"])
    expect(servers.both.problem).toBe(`defined in both "mcpServers" and "servers"`)
    expect(servers.a.problem).toBeUndefined()
    expect(servers.b.problem).toBeUndefined()
  })

  it("accepts an empty server list and a byte-order mark", () => {
    expect(parseOk("\uFEFF{ \"mcpServers\": {} }")).toEqual({})
  })
})

describe("parse: transports", () => {
  it("infers stdio from command, ws from a ws: url and http from any other url", () => {
    const servers = parseOk({
      mcpServers: {
        local: { command: "server" },
        web: { url: "https://example.com/mcp" },
        socket: { url: "wss://example.com/mcp" },
        named: { type: "websocket", url: "ws://127.0.0.1:1/mcp" }
      }
    })
    expect(servers.local.transport.type).toBe("stdio")
    expect(servers.web.transport.type).toBe("http")
    expect(servers.socket.transport).toEqual({ type: "ws", url: "wss://example.com/mcp" })
    expect(servers.named.transport.type).toBe("ws")
  })

  it("marks an unusable server with a problem and a placeholder, and leaves the others alone", () => {
    const servers = parseOk({
      mcpServers: {
        both: { command: "x", url: "https://example.com" },
        neither: { args: ["x"] },
        stdioWithUrl: { type: "stdio", url: "https://example.com" },
        httpWithCommand: { type: "http", command: "x" },
        sseWithCommand: { type: "sse", command: "x" },
        websocket: { type: "ws", url: "https://example.com" },
        unknown: { type: "grpc", url: "https://example.com" },
        notHttp: { url: "ftp://example.com" },
        notAUrl: { url: "example.com/mcp" },
        emptyCommand: { command: "  " },
        fine: { command: "ok" }
      }
    })
    expect(servers.both.problem).toBe(`both "command" and "url" are set; a server has one or the other`)
    expect(servers.neither.problem).toBe(`neither "command" nor "url" is set`)
    expect(servers.stdioWithUrl.problem).toBe(`type "stdio" needs "command", but "url" is set`)
    expect(servers.httpWithCommand.problem).toBe(`type "http" needs "url", but "command" is set`)
    expect(servers.sseWithCommand.problem).toBe(`type "sse" needs "url", but "command" is set`)
    expect(servers.websocket.problem).toBe(`"url" is not a ws or wss URL`)
    expect(servers.unknown.problem).toBe(`unknown type "grpc" (expected "stdio", "http", "sse" or "ws")`)
    expect(servers.notHttp.problem).toBe(`"url" is not an http or https URL`)
    expect(servers.notAUrl.problem).toBe(`"url" is not an http or https URL`)
    expect(servers.emptyCommand.problem).toBe(`"command" is empty`)
    // The placeholder keeps the transport the entry was meant to have, where that is known.
    expect(Object.fromEntries(Object.entries(servers).map(([name, spec]) => [name, spec.transport]))).toEqual({
      both: { type: "stdio", command: "" },
      neither: { type: "stdio", command: "" },
      stdioWithUrl: { type: "stdio", command: "" },
      httpWithCommand: { type: "stdio", command: "" },
      sseWithCommand: { type: "stdio", command: "" },
      websocket: { type: "ws", url: "" },
      unknown: { type: "stdio", command: "" },
      notHttp: { type: "http", url: "" },
      notAUrl: { type: "http", url: "" },
      emptyCommand: { type: "stdio", command: "" },
      fine: { type: "stdio", command: "ok" }
    })
    expect(servers.fine).toEqual({ name: "fine", transport: { type: "stdio", command: "ok" } })
  })

  it("resolves a relative cwd against the file's directory, and leaves command alone", () => {
    const servers = parseOk(
      {
        mcpServers: {
          relative: { command: "./bin/server", cwd: "tools/server" },
          dot: { command: "x", cwd: "." },
          absolute: { command: "x", cwd: "/srv/mcp" },
          expanded: { command: "x", cwd: "${TOOLS}/y" }
        }
      },
      { TOOLS: "tools" },
      "/work/project/.mcp.json"
    )
    expect(stdio(servers.relative).cwd).toBe("/work/project/tools/server")
    expect(stdio(servers.relative).command).toBe("./bin/server")
    expect(stdio(servers.dot).cwd).toBe("/work/project")
    expect(stdio(servers.absolute).cwd).toBe("/srv/mcp")
    expect(stdio(servers.expanded).cwd).toBe("/work/project/tools/y")
  })

  it("keeps inheritEnv and drops empty args, env and headers", () => {
    const servers = parseOk({
      mcpServers: {
        a: { command: "a", args: [], env: {}, inheritEnv: false },
        b: { url: "https://example.com/mcp", headers: {} }
      }
    })
    expect(servers.a.transport).toEqual({ type: "stdio", command: "a", inheritEnv: false })
    expect(servers.b.transport).toEqual({ type: "http", url: "https://example.com/mcp" })
  })
})

describe("parse: supervision", () => {
  it("maps disabled, enabled: false and required, writing only true", () => {
    const servers = parseOk({
      mcpServers: {
        off: { command: "x", disabled: true },
        alsoOff: { command: "x", enabled: false },
        on: { command: "x", enabled: true, disabled: false, required: false },
        needed: { command: "x", required: true }
      }
    })
    expect(servers.off.disabled).toBe(true)
    expect(servers.alsoOff.disabled).toBe(true)
    expect(servers.on).toEqual({ name: "on", transport: { type: "stdio", command: "x" } })
    expect(servers.needed.required).toBe(true)
    // `false` and a missing field mean the same, and hash the same.
    expect(ServerSpec.hash(servers.on)).toBe(
      ServerSpec.hash({ name: "on", transport: { type: "stdio", command: "x" } })
    )
  })

  it("takes pinning from the server's entry, else from the file's top level", () => {
    const servers = parseOk({
      pinning: "quarantine",
      mcpServers: { strict: { command: "x" }, relaxed: { command: "x", pinning: "off" } }
    })
    expect(servers.strict.pinning).toBe("quarantine")
    expect(servers.relaxed.pinning).toBe("off")
    expect(parseOk({ mcpServers: { plain: { command: "x" } } }).plain.pinning).toBeUndefined()
    expect(parseError(`{"pinning": "sometimes", "mcpServers": {}}`).message).toContain("pinning")
  })

  it("turns host features off per server: only false is written, and true hashes like nothing", () => {
    const servers = parseOk({
      mcpServers: {
        quiet: { command: "x", sampling: false, elicitation: false, roots: false },
        noSampling: { command: "x", sampling: false, roots: true },
        plain: { command: "x", sampling: true }
      }
    })
    expect(servers.quiet.host).toEqual({ sampling: false, elicitation: false, roots: false })
    expect(servers.noSampling.host).toEqual({ sampling: false })
    expect(servers.plain.host).toBeUndefined()
    expect(ServerSpec.hash(servers.plain)).toBe(
      ServerSpec.hash({ name: "plain", transport: { type: "stdio", command: "x" } })
    )
    expect(parseError(`{"mcpServers": {"a": {"command": "x", "sampling": "no"}}}`).message).toContain("sampling")
  })

  it("reads the CLI's sampling command, run in the file's folder", () => {
    const file = path.join(path.sep, "project", ".mcp.json")
    const parsed = FleetConfig.parseFile(
      JSON.stringify({ sampling: { command: "llm", args: ["--json"], timeout: 5000 }, mcpServers: {} }),
      file,
      {}
    )
    expect(Either.getOrThrow(parsed).sampling).toEqual({
      command: "llm",
      args: ["--json"],
      cwd: path.dirname(file),
      timeout: Duration.millis(5000)
    })
    const none = FleetConfig.parseFile(JSON.stringify({ mcpServers: {} }), file, {})
    expect(Either.getOrThrow(none).sampling).toBeUndefined()
    expect(parseError(`{"sampling": {"command": ""}, "mcpServers": {}}`).message).toContain("sampling.command")
  })

  it("maps timeouts, restart and health from milliseconds, with aliases", () => {
    const servers = parseOk({
      mcpServers: {
        full: {
          command: "x",
          initializeTimeout: 5000,
          requestTimeout: 120000,
          readyTimeout: 15000,
          idleTimeout: 600000,
          restart: { initialDelay: 250, maxDelay: 10000, stableAfter: 30000, factor: 3, jitter: 0.1, maxAttempts: 5 },
          health: { interval: 30000, timeout: 2000, failures: 2 }
        },
        aliases: { command: "x", startupTimeout: 7000, timeout: 9000 },
        canonicalWins: { command: "x", initializeTimeout: 1, startupTimeout: 2 }
      }
    })
    const full = servers.full
    expect(ms(full.initializeTimeout)).toBe(5000)
    expect(ms(full.requestTimeout)).toBe(120000)
    expect(ms(full.readyTimeout)).toBe(15000)
    expect(ms(full.idleTimeout)).toBe(600000)
    expect(Duration.isDuration(full.initializeTimeout)).toBe(true)
    expect(ms(full.restart!.initialDelay)).toBe(250)
    expect(ms(full.restart!.maxDelay)).toBe(10000)
    expect(ms(full.restart!.stableAfter)).toBe(30000)
    expect(full.restart).toMatchObject({ factor: 3, jitter: 0.1, maxAttempts: 5 })
    expect(ms(full.health!.interval)).toBe(30000)
    expect(ms(full.health!.timeout)).toBe(2000)
    expect(full.health!.failures).toBe(2)

    expect(ms(servers.aliases.initializeTimeout)).toBe(7000)
    // `timeout` is ambiguous between tools (seconds in Cline, ms in Gemini CLI): ignored.
    expect(servers.aliases.requestTimeout).toBeUndefined()
    expect(ms(servers.canonicalWins.initializeTimeout)).toBe(1)

    const bare = parseOk({ mcpServers: { bare: { command: "x" } } }).bare
    expect(Object.keys(bare)).toEqual(["name", "transport"])
  })

  it("applies the defaults block to every server, field by field, and lets servers override", () => {
    const servers = parseOk({
      defaults: {
        requestTimeout: 30000,
        startupTimeout: 8000,
        restart: { maxAttempts: 3, factor: 2 },
        health: { interval: 60000, failures: 3 }
      },
      servers: {
        plain: { command: "x" },
        own: {
          command: "x",
          requestTimeout: 5000,
          initializeTimeout: 1000,
          restart: { maxAttempts: 10 },
          health: { failures: 1 }
        }
      }
    })
    expect(ms(servers.plain.requestTimeout)).toBe(30000)
    expect(ms(servers.plain.initializeTimeout)).toBe(8000)
    expect(servers.plain.restart).toEqual({ maxAttempts: 3, factor: 2 })
    expect(ms(servers.plain.health!.interval)).toBe(60000)
    expect(servers.plain.health!.failures).toBe(3)

    expect(ms(servers.own.requestTimeout)).toBe(5000)
    expect(ms(servers.own.initializeTimeout)).toBe(1000)
    expect(servers.own.restart).toEqual({ maxAttempts: 10, factor: 2 })
    expect(ms(servers.own.health!.interval)).toBe(60000)
    expect(servers.own.health!.failures).toBe(1)
  })

  it("marks a health check without an interval", () => {
    const servers = parseOk({ mcpServers: { a: { command: "x", health: { failures: 2 } }, b: { command: "y" } } })
    expect(servers.a.problem).toBe(`"health" needs an "interval"`)
    expect(servers.b.problem).toBeUndefined()
  })
})

// --- variables ----------------------------------------------------------------------

describe("parse: variables", () => {
  const env = { HOME: "/home/me", TOKEN: "s3cr3t-token", PORT: "8080", EMPTY: "" }

  it("expands ${VAR}, ${VAR:-default} and ${env:VAR} in every field that takes them", () => {
    const servers = parseOk({
      mcpServers: {
        local: {
          command: "${HOME}/bin/server",
          args: ["--port", "${PORT:-3000}", "--level=${LEVEL:-info}", "${env:HOME}", "cost: $5 and $HOME"],
          env: { API_KEY: "${TOKEN}", MODE: "${MODE:-fast}", PLAIN: "literal" },
          cwd: "${HOME}/work"
        },
        web: {
          url: "https://example.com:${PORT}/mcp",
          headers: { Authorization: "Bearer ${env:TOKEN}", Accept: "application/json" }
        },
        empty: { command: "x", args: ["${EMPTY}", "${EMPTY:-fallback}", "${UNSET:-}"] }
      }
    }, env)
    const local = stdio(servers.local)
    expect(local.command).toBe("/home/me/bin/server")
    expect(local.args).toEqual(["--port", "8080", "--level=info", "/home/me", "cost: $5 and $HOME"])
    expect(local.cwd).toBe("/home/me/work")
    expect(Redacted.value(local.env!.API_KEY as Redacted.Redacted<string>)).toBe("s3cr3t-token")
    expect(Redacted.value(local.env!.MODE as Redacted.Redacted<string>)).toBe("fast")
    expect(local.env!.PLAIN).toBe("literal")

    const web = remote(servers.web)
    expect(web.url).toBe("https://example.com:8080/mcp")
    expect(Redacted.value(web.headers!.Authorization as Redacted.Redacted<string>)).toBe("Bearer s3cr3t-token")
    expect(web.headers!.Accept).toBe("application/json")

    // As in the shell, `:-` also replaces a variable that is set but empty.
    expect(stdio(servers.empty).args).toEqual(["", "fallback", ""])
  })

  it("marks only the server that uses an unset variable, naming the variable and the field", () => {
    const servers = parseOk({
      mcpServers: {
        broken: { command: "x", args: ["--db", "${DATABASE_URL}"], env: { KEY: "${TOKEN}" } },
        twice: { url: "https://${HOST}/mcp", headers: { Authorization: "Bearer ${API_KEY}" } },
        fine: { command: "x", env: { KEY: "${TOKEN}" } }
      }
    }, env)
    expect(servers.broken.problem).toBe("variable DATABASE_URL is not set (used in args[1])")
    expect(servers.broken.transport).toEqual({ type: "stdio", command: "" })
    expect(servers.twice.problem).toBe(
      "variable HOST is not set (used in url); variable API_KEY is not set (used in headers.Authorization)"
    )
    // A URL server is shown as the remote server it is, its half-expanded URL kept out.
    expect(servers.twice.transport).toEqual({ type: "http", url: "" })
    expect(servers.fine.problem).toBeUndefined()
    // A problem never carries a value: the secret set for `broken` is nowhere in it.
    expect(JSON.stringify(servers.broken)).not.toContain("s3cr3t")
  })

  it("marks unsupported and malformed references, saying \"not supported\" for VS Code's own", () => {
    const servers = parseOk({
      mcpServers: {
        config: { command: "x", args: ["${config:editor.fontSize}"] },
        file: { command: "x", args: ["${file}"] },
        cwd: { command: "x", args: ["${cwd}"] },
        spaces: { command: "x", args: ["${NOT A NAME}"] },
        open: { command: "x", args: ["${HOME"] },
        nested: { command: "x", args: ["${A:-${B}}"] }
      }
    }, env)
    expect(servers.config.problem).toBe("${config:editor.fontSize} in args[0] is not supported")
    expect(servers.file.problem).toBe("${file} in args[0] is not supported (it is VS Code's, for the open editor)")
    expect(servers.cwd.problem).toBe("${cwd} in args[0] is not supported (it is VS Code's, for the open editor)")
    // A variable of that name in the environment is used, as for any other name.
    expect(stdio(parseOk({ mcpServers: { a: { command: "x", args: ["${cwd}"] } } }, { cwd: "/here" }).a).args)
      .toEqual(["/here"])
    expect(servers.spaces.problem).toBe("invalid variable reference ${NOT A NAME} in args[0]")
    expect(servers.open.problem).toBe(`unterminated "\${" in args[0]`)
    expect(servers.nested.problem).toBe("nested variables are not supported (in args[0])")
  })

  it("reads variables from process.env when no env is given", () => {
    const key = `MCP_FLEET_CONFIG_TEST_${process.pid}`
    process.env[key] = "from-process"
    try {
      const result = FleetConfig.parse(JSON.stringify({ mcpServers: { a: { command: `\${${key}}` } } }), CONFIG)
      expect(Either.getOrThrow(result)[0].transport).toEqual({ type: "stdio", command: "from-process" })
    } finally {
      delete process.env[key]
    }
  })

  it("redacts env and header values that held a reference, wherever they are printed", () => {
    const servers = parseOk({
      mcpServers: {
        local: { command: "x", env: { API_KEY: "${TOKEN}" } },
        web: { url: "https://example.com/mcp", headers: { Authorization: "Bearer ${TOKEN}" } }
      }
    }, env)
    const key = stdio(servers.local).env!.API_KEY
    const header = remote(servers.web).headers!.Authorization
    expect(Redacted.isRedacted(key)).toBe(true)
    expect(Redacted.isRedacted(header)).toBe(true)
    for (const spec of Object.values(servers)) {
      expect(String(spec)).not.toContain("s3cr3t")
      expect(JSON.stringify(spec)).not.toContain("s3cr3t")
      expect(util.inspect(spec, { depth: 10 })).not.toContain("s3cr3t")
    }
    expect(String(key)).not.toContain("s3cr3t")
    expect(`${String(header)}`).not.toContain("s3cr3t")
    // The hash still sees a changed secret.
    const rotated = parseOk({ mcpServers: { local: { command: "x", env: { API_KEY: "${TOKEN}" } } } }, {
      TOKEN: "rotated"
    })
    expect(ServerSpec.hash(rotated.local)).not.toBe(ServerSpec.hash(servers.local))
  })
})

// --- errors -------------------------------------------------------------------------

describe("parse: errors", () => {
  it("fails on a file that is not JSON, naming the path and the place", () => {
    const error = parseError(`{\n  "mcpServers": {\n    "a": { "command": "x" }\n  `)
    expect(error._tag).toBe("ConfigError")
    expect(error.path).toBe(CONFIG)
    expect(error.message).toMatch(/^invalid config file \/work\/project\/\.mcp\.json: not valid JSON: /)
    expect(error.message).toContain("line 4")
  })

  it("does not quote the file's text in a JSON error", () => {
    const error = parseError(`{ "mcpServers": { "a": { "command": "x", "env": { "K": sk-live-123456 } } } }`)
    expect(error.message).toContain("not valid JSON")
    expect(error.message).not.toContain("sk-live")
  })

  it("fails on a file with neither mcpServers nor servers", () => {
    const error = parseError(JSON.stringify({ theme: "dark" }))
    expect(error.message).toBe(`invalid config file ${CONFIG}: expected an object with "mcpServers" or "servers"`)
    expect(parseError("[]").message).toBe(`invalid config file ${CONFIG}: expected an object, got []`)
  })

  it("fails on known fields of the wrong type with one sentence per bad entry, all of them", () => {
    const error = parseError(JSON.stringify({
      defaults: { restart: { jitter: 2 } },
      policy: { default: "maybe" },
      mcpServers: {
        memory: { command: 5 },
        b: { command: "x", args: "--verbose", requestTimeout: "30s", disabled: "yes", health: { interval: -1 } },
        c: "npx server",
        "my.server": { command: "x", args: ["a", 3] }
      }
    }))
    expect(error.path).toBe(CONFIG)
    expect(error.reason.split("; ").sort()).toEqual([
      `defaults.restart.jitter: expected a number between 0 and 1, got 2`,
      `mcpServers.b.args: expected an array of strings, got "--verbose"`,
      `mcpServers.b.disabled: expected true or false, got "yes"`,
      `mcpServers.b.health.interval: expected a positive number, got -1`,
      `mcpServers.b.requestTimeout: expected a number, got "30s"`,
      `mcpServers.c: expected an object, got "npx server"`,
      `mcpServers.memory.command: expected a string, got 5`,
      `mcpServers["my.server"].args[1]: expected a string, got 3`,
      `policy.default: expected "allow", "deny" or "ask", got "maybe"`
    ])
    expect(error.message).not.toContain("└")
  })

  it("refuses a key named __proto__, naming where it is, rather than dropping it", () => {
    const where = [
      [`{"mcpServers":{"__proto__":{"command":"x"},"b":{"command":"y"}}}`, `mcpServers.__proto__`],
      [`{"servers":{"a":{"command":"x","env":{"__proto__":"v"}}}}`, `servers.a.env.__proto__`],
      [`{"mcpServers":{},"policy":{"tools":{"__proto__":{"timeout":5}}}}`, `policy.tools.__proto__`]
    ] as const
    for (const [text, path] of where) {
      expect(parseError(text).reason).toBe(`${path}: a key named "__proto__" cannot be used`)
    }
  })

  it("takes the names of other Object.prototype members as ordinary names", () => {
    const names = ["constructor", "toString", "hasOwnProperty", "valueOf"]
    const servers = parseOk({
      mcpServers: Object.fromEntries(names.map((name) => [name, { command: name, env: { [name]: name } }]))
    })
    expect(Object.keys(servers)).toEqual(names)
    for (const name of names) expect(stdio(servers[name]!)).toMatchObject({ command: name, env: { [name]: name } })
  })

  it("does not quote env or header values in a schema error", () => {
    const error = parseError(JSON.stringify({ mcpServers: { a: { command: "x", env: { KEY: 123456789 } } } }))
    expect(error.reason).toBe("mcpServers.a.env.KEY: expected a string (value not shown)")
    expect(error.message).not.toContain("123456789")
    const headers = parseError(JSON.stringify({ mcpServers: { a: { url: "https://x", headers: "Bearer abcdef" } } }))
    expect(headers.reason).toBe("mcpServers.a.headers: expected an object of strings (values not shown)")
    expect(headers.message).not.toContain("abcdef")
  })
})

// --- paths --------------------------------------------------------------------------

describe("paths", () => {
  it("defaults to the user file, then the project's .mcp.json and mcp.json", () => {
    expect(FleetConfig.defaultPaths("/work/p", "/home/me")).toEqual([
      "/home/me/.config/mcp-fleet/mcp.json",
      "/work/p/.mcp.json",
      "/work/p/mcp.json"
    ])
    expect(FleetConfig.pathsFromEnv({}, "/work/p", "/home/me")).toEqual(FleetConfig.defaultPaths("/work/p", "/home/me"))
  })

  it("takes MCP_FLEET_CONFIG instead, resolving relative entries", () => {
    const list = ["/etc/fleet.json", "", "local.json"].join(path.delimiter)
    expect(FleetConfig.pathsFromEnv({ MCP_FLEET_CONFIG: list }, "/work/p", "/home/me")).toEqual([
      "/etc/fleet.json",
      "/work/p/local.json"
    ])
    expect(FleetConfig.pathsFromEnv({ MCP_FLEET_CONFIG: "" }, "/work/p", "/home/me")).toHaveLength(3)
  })
})

// --- load ---------------------------------------------------------------------------

describe("load", () => {
  it.effect("merges user and project files by name; the project wins", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const user = path.join(dir, "home", ".config", "mcp-fleet", "mcp.json")
      const project = path.join(dir, "project", ".mcp.json")
      writeJson(user, {
        defaults: { requestTimeout: 1000 },
        mcpServers: { memory: { command: "user-memory" }, search: { url: "https://search.example.com/mcp" } }
      })
      writeJson(project, {
        servers: { memory: { command: "project-memory", cwd: "tools" }, files: { command: "files" } }
      })
      const loaded = yield* FleetConfig.load({ paths: [user, project], env: {} })
      expect(loaded.servers.map((spec) => spec.name)).toEqual(["memory", "search", "files"])
      const memory = loaded.servers[0]
      expect(memory.transport).toEqual({
        type: "stdio",
        command: "project-memory",
        cwd: path.join(dir, "project", "tools")
      })
      // A file's defaults apply to its own servers only.
      expect(memory.requestTimeout).toBeUndefined()
      expect(ms(loaded.servers[1].requestTimeout)).toBe(1000)
      expect(loaded.origin).toEqual({ memory: project, search: user, files: project })
      expect(loaded.sources).toEqual([
        { path: user, found: true, servers: 2 },
        { path: project, found: true, servers: 2 }
      ])
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.effect("merges the policy blocks of all files; per-server policy stays out of the specs", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const user = path.join(dir, "home", "mcp.json")
      const project = path.join(dir, "project", ".mcp.json")
      writeJson(user, {
        policy: {
          deny: ["mcp__*__delete_*"],
          default: "ask",
          limits: { timeout: 1000, maxConcurrent: 2 },
          audit: "audit.jsonl"
        },
        mcpServers: { github: { command: "gh", policy: { ask: ["create_*"] } } }
      })
      writeJson(project, {
        policy: { deny: ["mcp__github__merge_*"], default: "allow", limits: { timeout: 5000 } },
        mcpServers: { github: { command: "gh", policy: { deny: ["push"], limits: { maxConcurrent: 1 } } } }
      })
      const loaded = yield* FleetConfig.load({ paths: [user, project], env: {} })
      expect(loaded.policy).toEqual({
        deny: ["mcp__*__delete_*", "mcp__github__merge_*"],
        default: "ask",
        limits: { timeout: 5000, maxConcurrent: 2 },
        audit: path.join(dir, "home", "audit.jsonl"),
        servers: { github: { ask: ["create_*"], deny: ["push"], limits: { maxConcurrent: 1 } } }
      })
      const alone = yield* FleetConfig.load({ paths: [project], env: {} })
      expect(ServerSpec.hash(alone.servers[0])).toBe(ServerSpec.hash(loaded.servers[0]))
      const none = path.join(dir, "none.json")
      writeJson(none, { mcpServers: {} })
      expect((yield* FleetConfig.load({ paths: [none] })).policy).toEqual({})
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.effect("fails on a named file that does not exist, from paths or MCP_FLEET_CONFIG, naming it", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const good = path.join(dir, "good.json")
      writeJson(good, { mcpServers: { a: { command: "a" } } })
      const missing = path.join(dir, "nope", "b.json")
      const error = yield* Effect.flip(FleetConfig.load({ paths: [good, missing] }))
      expect(error).toMatchObject({ _tag: "ConfigError", path: missing, missing: true })
      expect(error.message).toBe(`config file ${missing} does not exist`)

      const listed = yield* Effect.flip(FleetConfig.load({ env: { MCP_FLEET_CONFIG: missing } }))
      expect(listed.message).toBe(`config file ${missing} does not exist`)

      // The layer fails too, rather than running an empty fleet.
      const exit = yield* FleetConfig.layer({ paths: [missing] }).pipe(
        Layer.provide(ServerRegistry.layer()),
        Layer.provide(Platform),
        Layer.build,
        Effect.scoped,
        Effect.exit
      )
      expect(exit).toMatchObject({ _tag: "Failure" })
      expect(String(Exit.isFailure(exit) && exit.cause)).toContain(`config file ${missing} does not exist`)
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.effect("reads an envFile under the entry's own env, its values Redacted; an unreadable one is a problem", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const file = path.join(dir, ".vscode", "mcp.json")
      fs.writeFileSync(
        path.join(dir, ".env"),
        "# secrets\nexport A=1\nB=\"two\\nlines\"\nC='x y'\nD=plain # a comment\n"
      )
      fs.writeFileSync(path.join(dir, "bad.env"), "A=1\nnot an assignment\n")
      writeJson(file, {
        servers: {
          a: { command: "x", envFile: "${workspaceFolder}/.env", env: { D: "own" } },
          b: { command: "x", envFile: "missing.env" },
          c: { command: "x", envFile: "bad.env" }
        }
      })
      const loaded = yield* FleetConfig.load({ paths: [file], env: {} })
      const [a, b, c] = loaded.servers
      const env = Object.fromEntries(
        Object.entries(stdio(a).env!).map((
          [key, value]
        ) => [key, Redacted.isRedacted(value) ? Redacted.value(value) : value])
      )
      expect(env).toEqual({ A: "1", B: "two\nlines", C: "x y", D: "own" })
      expect(Redacted.isRedacted(stdio(a).env!.A)).toBe(true)
      expect(a.problem).toBeUndefined()
      expect(b.problem).toBe(`envFile ${path.join(dir, "missing.env")}: does not exist`)
      expect(c.problem).toBe(`envFile ${path.join(dir, "bad.env")}: line 2 is not KEY=value`)
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.effect("asks for each ${input:id} no variable supplies, once, with its description, and uses the answer", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const file = path.join(dir, "mcp.json")
      writeJson(file, {
        inputs: [{ type: "promptString", id: "token", description: "The API token", password: true }],
        servers: {
          a: { url: "https://example.com/mcp", headers: { Authorization: "Bearer ${input:token}" } },
          b: { command: "x", env: { TOKEN: "${input:token}" } },
          c: { command: "x", args: ["${input:other}", "${input:given}"] }
        }
      })
      const asked: Array<FleetConfig.InputRequest> = []
      const loaded = yield* FleetConfig.load({
        paths: [file],
        env: { MCP_FLEET_INPUT_GIVEN: "from-env" },
        askInput: (request) =>
          Effect.sync(() => {
            asked.push(request)
            return request.id === "token" ? "s3cret" : undefined
          })
      })
      expect(asked).toEqual([
        { id: "token", description: "The API token", password: true, variable: "MCP_FLEET_INPUT_TOKEN" },
        { id: "other", description: undefined, password: false, variable: "MCP_FLEET_INPUT_OTHER" }
      ])
      const [a, b, c] = loaded.servers
      expect(a.problem).toBeUndefined()
      expect(Redacted.value(remote(a).headers!.Authorization as Redacted.Redacted<string>)).toBe("Bearer s3cret")
      expect(Redacted.value(stdio(b).env!.TOKEN as Redacted.Redacted<string>)).toBe("s3cret")
      expect(c.problem).toContain(`input "other" has no value`)
      expect(c.problem).not.toContain("given")
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.effect("fails with a ConfigError naming the invalid file", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const good = path.join(dir, "good.json")
      const bad = path.join(dir, "bad.json")
      writeJson(good, { mcpServers: { a: { command: "a" } } })
      writeJson(bad, `{ "mcpServers": { "b": { "command": "b", "args": 5 } } }`)
      const error = yield* Effect.flip(FleetConfig.load({ paths: [good, bad] }))
      expect(error).toBeInstanceOf(FleetConfig.ConfigError)
      expect(error.path).toBe(bad)
      expect(error.message).toBe(`invalid config file ${bad}: mcpServers.b.args: expected an array of strings, got 5`)

      writeJson(bad, "{ not json")
      expect((yield* Effect.flip(FleetConfig.load({ paths: [good, bad] }))).message)
        .toContain(`invalid config file ${bad}: not valid JSON`)
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.effect("fails on a path it cannot read", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const exit = yield* Effect.exit(FleetConfig.load({ paths: [dir] }))
      expect(Exit.isFailure(exit)).toBe(true)
      const error = yield* Effect.flip(FleetConfig.load({ paths: [dir] }))
      expect(error.path).toBe(dir)
      expect(error.reason).toMatch(/^cannot be read/)
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})

// --- changes ------------------------------------------------------------------------

interface LogLine {
  readonly level: string
  readonly message: string
}

/**
 * Runs `changes` in the background: its emissions and its warnings and infos land in
 * queues, and `next`/`nextLog` wait for the following one, bounded.
 */
const watch = (options: FleetConfig.WatchOptions) =>
  Effect.gen(function*() {
    const emissions = yield* Queue.unbounded<FleetConfig.Loaded>()
    const logs = yield* Queue.unbounded<LogLine>()
    const logger = Logger.make(({ logLevel, message }) => {
      const parts = Array.isArray(message) ? message : [message]
      Queue.unsafeOffer(logs, { level: logLevel.label, message: parts.map(String).join(" ") })
    })
    yield* FleetConfig.changes(options).pipe(
      Stream.runForEach((loaded) => Queue.offer(emissions, loaded)),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
      Logger.withMinimumLogLevel(LogLevel.Debug),
      Effect.provide(NodeFileSystem.layer),
      Effect.forkScoped
    )
    const next = Queue.take(emissions).pipe(
      Effect.timeoutFail({ duration: hangGuard(10_000), onTimeout: () => new Error("no emission in time") })
    )
    const nextLog = (level: string) =>
      Queue.take(logs).pipe(
        Effect.repeat({ until: (line) => line.level === level }),
        Effect.timeoutFail({ duration: hangGuard(10_000), onTimeout: () => new Error(`no ${level} log in time`) })
      )
    return { emissions, next, nextLog }
  })

const hashes = (loaded: FleetConfig.Loaded) =>
  Object.fromEntries(loaded.servers.map((spec) => [spec.name, ServerSpec.hash(spec)]))

describe("changes", () => {
  it.scopedLive("emits the config, then each edit that changes a spec, and skips invalid edits", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const user = path.join(dir, "home", "mcp.json")
      const project = path.join(dir, "project", ".mcp.json")
      writeJson(user, { mcpServers: { memory: { command: "memory" }, shared: { command: "user-shared" } } })
      writeJson(project, {
        mcpServers: { files: { command: "files", args: ["."] }, shared: { command: "project-shared" } }
      })
      const { emissions, next, nextLog } = yield* watch({ paths: [user, project], env: {} })

      const first = yield* next
      expect(first.servers.map((spec) => spec.name)).toEqual(["memory", "shared", "files"])
      expect(first.origin.shared).toBe(project)

      // An edit of one server: one emission, and only that server's hash moves.
      saveJson(project, {
        mcpServers: { files: { command: "files", args: ["/srv"] }, shared: { command: "project-shared" } }
      })
      const second = yield* next
      const [before, after] = [hashes(first), hashes(second)]
      expect(after.memory).toBe(before.memory)
      expect(after.shared).toBe(before.shared)
      expect(after.files).not.toBe(before.files)
      expect(stdio(second.servers[2]).args).toEqual(["/srv"])

      // An invalid edit: a warning naming the file and the field, and nothing emitted.
      saveJson(project, { mcpServers: { files: { command: "files", args: "/srv" } } })
      const warning = yield* nextLog("WARN")
      expect(warning.message).toBe(
        `invalid config file ${project}: mcpServers.files.args: expected an array of strings, got "/srv"; keeping the last good config`
      )
      expect(yield* Queue.size(emissions)).toBe(0)

      // The fix is emitted.
      saveJson(project, {
        mcpServers: { files: { command: "files", args: ["/data"] }, shared: { command: "project-shared" } }
      })
      const third = yield* next
      expect(stdio(third.servers[2]).args).toEqual(["/data"])
      expect(hashes(third).memory).toBe(before.memory)

      // A save without a change in any spec is not emitted; the edit after it is.
      saveJson(user, { mcpServers: { memory: { command: "memory" }, shared: { command: "user-shared" } }, theme: "x" })
      saveJson(user, {
        mcpServers: { memory: { command: "memory", disabled: true }, shared: { command: "user-shared" } }
      })
      const fourth = yield* next
      expect(fourth.servers[0].disabled).toBe(true)

      // A deleted file is a warning, and the fleet keeps its servers until the file is back.
      fs.rmSync(project)
      const deleted = yield* nextLog("WARN")
      expect(deleted.message).toBe(`config file ${project} was deleted; keeping the last good config until it is back`)
      expect(yield* Queue.size(emissions)).toBe(0)
      saveJson(project, { mcpServers: { files: { command: "files", args: ["/back"] } } })
      const fifth = yield* next
      expect(fifth.servers.map((spec) => spec.name)).toEqual(["memory", "shared", "files"])
      expect(fifth.origin.shared).toBe(user)
    }))

  it.scopedLive("passes each warning to onWarning too", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const file = path.join(dir, ".mcp.json")
      writeJson(file, { mcpServers: { a: { command: "a" } } })
      const warnings = yield* Queue.unbounded<string>()
      const { next } = yield* watch({ paths: [file], env: {}, onWarning: (message) => Queue.offer(warnings, message) })
      yield* next
      saveJson(file, { mcpServers: { a: { command: 5 } } })
      expect(yield* Queue.take(warnings)).toBe(
        `invalid config file ${file}: mcpServers.a.command: expected a string, got 5; keeping the last good config`
      )
      fs.rmSync(file)
      expect(yield* Queue.take(warnings)).toBe(
        `config file ${file} was deleted; keeping the last good config until it is back`
      )
    }))

  it.scopedLive("emits a policy edit, which leaves every spec's hash as it was", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const file = path.join(dir, ".mcp.json")
      writeJson(file, { mcpServers: { files: { command: "files" } } })
      const { next } = yield* watch({ paths: [file], env: {} })
      const first = yield* next
      expect(first.policy).toEqual({})
      saveJson(file, { mcpServers: { files: { command: "files", policy: { deny: ["write_*"] } } } })
      const second = yield* next
      expect(second.policy).toEqual({ servers: { files: { deny: ["write_*"] } } })
      expect(hashes(second)).toEqual(hashes(first))
    }))

  it.scopedLive("picks up a file whose directory appears later", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const later = path.join(dir, "not-yet", "mcp.json")
      const { emissions, next, nextLog } = yield* watch({ paths: [later], env: {} })
      expect((yield* nextLog("WARN")).message).toBe(`config file ${later} does not exist; waiting for a valid config`)
      // Only once the watch has failed for want of the directory is it created.
      expect((yield* nextLog("DEBUG")).message).toContain(`cannot watch ${path.dirname(later)}`)
      expect(yield* Queue.size(emissions)).toBe(0)
      saveJson(later, { mcpServers: { a: { command: "a" } } })
      const first = yield* next
      expect(first.servers.map((spec) => spec.name)).toEqual(["a"])
    }))

  it.scopedLive("starts with a warning on an invalid file and emits once it is fixed", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const file = path.join(dir, ".mcp.json")
      writeJson(file, "{ broken")
      const { emissions, next, nextLog } = yield* watch({ paths: [file], env: {} })
      const warning = yield* nextLog("WARN")
      expect(warning.message).toContain(`invalid config file ${file}: not valid JSON`)
      expect(yield* Queue.size(emissions)).toBe(0)
      saveJson(file, { mcpServers: { a: { command: "a" } } })
      expect((yield* next).servers.map((spec) => spec.name)).toEqual(["a"])
    }))
})

describe("admit", () => {
  // Refuses any text that starts a server named "evil", as an untrusted edit would be.
  const admit = (file: string, text: string) =>
    text.includes("evil")
      ? Effect.fail(new FleetConfig.ConfigError({ path: file, reason: "not trusted" }))
      : Effect.void

  it.scopedLive("a refused file fails the load, and a refused edit is skipped like an invalid one", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const file = path.join(dir, ".mcp.json")
      writeJson(file, { mcpServers: { evil: { command: "evil" } } })
      const refused = yield* Effect.flip(FleetConfig.load({ paths: [file], env: {}, admit })).pipe(
        Effect.provide(NodeFileSystem.layer)
      )
      expect(refused.message).toBe(`invalid config file ${file}: not trusted`)

      writeJson(file, { mcpServers: { good: { command: "good" } } })
      const { emissions, next, nextLog } = yield* watch({ paths: [file], env: {}, admit })
      expect((yield* next).servers.map((spec) => spec.name)).toEqual(["good"])
      saveJson(file, { mcpServers: { good: { command: "good" }, evil: { command: "evil" } } })
      expect((yield* nextLog("WARN")).message).toBe(
        `invalid config file ${file}: not trusted; keeping the last good config`
      )
      expect(yield* Queue.size(emissions)).toBe(0)
    }))
})

describe("layerWithPolicy", () => {
  const envServer = fileURLToPath(new URL("./fixtures/env.mjs", import.meta.url))

  it.scopedLive("an edit of a policy block changes what the Policy denies, and no server restarts", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const file = path.join(dir, ".mcp.json")
      const entry = { command: process.execPath, args: [envServer] }
      writeJson(file, { mcpServers: { local: entry } })
      const context = yield* Layer.build(
        FleetConfig.layerWithPolicy({ paths: [file], debounce: "20 millis" }).pipe(
          Layer.provideMerge(ServerRegistry.layer()),
          Layer.provide(Platform)
        )
      )
      const registry = Context.get(context, ServerRegistry.ServerRegistry)
      const policy = Context.get(context, Policy.Policy)
      yield* registry.awaitReady({ servers: ["local"], timeout: hangGuard(10_000) })
      const pid = (yield* registry.status)[0].connection?.pid
      expect(pid).toBeTypeOf("number")
      yield* policy.callTool("mcp__local__env")

      // The decision follows the file: deny once the block says so, allow once it is gone.
      const decisionBecomes = (action: Policy.Action) =>
        Effect.sync(() => policy.decide("mcp__local__env").action).pipe(
          Effect.repeat({ until: (now) => now === action, schedule: Schedule.spaced("20 millis") }),
          // A hang guard (the watch's latency is no product bound), grown with the load.
          Effect.timeoutFail({
            duration: hangGuard(10_000),
            onTimeout: () => new Error(`the decision never became ${action}`)
          })
        )
      saveJson(file, { mcpServers: { local: { ...entry, policy: { deny: ["env"] } } } })
      yield* decisionBecomes("deny")
      expect(yield* policy.config).toEqual({ servers: { local: { deny: ["env"] } } })
      const denied = yield* Effect.flip(policy.callTool("mcp__local__env"))
      expect(denied.reason._tag).toBe("Denied")
      expect(denied.message).toContain(`rule deny "env" (server 'local')`)

      saveJson(file, { mcpServers: { local: entry } })
      yield* decisionBecomes("allow")
      yield* policy.callTool("mcp__local__env")
      // The same process all along: a policy edit leaves the spec, and the server, alone.
      const [status] = yield* registry.status
      expect(status.state._tag).toBe("Ready")
      expect(status.connection?.pid).toBe(pid)
    }))
})
