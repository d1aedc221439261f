// Checks that the main entry (src/index.ts, `mcp-fleet`) stays neutral: it bundles with esbuild
// for platform "neutral" and must reach no Node built-in (`node:*` or a bare `fs`, `http`, …),
// nor undici or ws. Those belong behind `mcp-fleet/node` (src/node/index.ts). On a failure it
// names the chain of importers from the entry to each forbidden import, so the fix is plain.
// The bundle cannot see globals, so each src module it loads is also parsed (TypeScript's
// parser) for the Node globals `Buffer` and `process` used as values: the neutral code has
// Web-standard stand-ins (internal/crypto.ts's base64, TextEncoder, internal/platform.ts's
// guarded `process`). GLOBALS_PENDING lists the few left on purpose, each with its reason.
// `npm run check:neutral`, run in CI by .ci/run; `--verbose` also lists the src modules loaded.
import { build } from "esbuild"
import { readdirSync, readFileSync } from "node:fs"
import { builtinModules } from "node:module"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = fileURLToPath(new URL("..", import.meta.url))
const entry = "src/index.ts"
const builtins = new Set(builtinModules.filter((name) => !name.startsWith("_")))
const forbiddenPackages = new Set(["undici", "ws"])
const nodeGlobals = new Set(["Buffer", "process"])
/** Modules allowed a Node global for now, and why: byte paths where Buffer is the fast way. */
const GLOBALS_PENDING = new Map([
  // LineDecoder: the ndjson framing of stdio (Node only), per line on the hot path.
  ["src/JsonRpc.ts", "Buffer"],
  // The undici wire's response body (Node only), per answer.
  ["src/internal/transport/http.ts", "Buffer"],
  // Buffer.byteLength: the result-size limit, per call, without copying the JSON.
  ["src/internal/policy/resultSize.ts", "Buffer"]
])

/** The lines of `file` that use a Node global as a value (not as a property name or a type). */
const globalUses = (file) => {
  const text = readFileSync(new URL(`../${file}`, import.meta.url), "utf8")
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const uses = []
  const visit = (node) => {
    if (ts.isIdentifier(node) && nodeGlobals.has(node.text)) {
      const parent = node.parent
      const isName = (ts.isPropertyAccessExpression(parent) && parent.name === node) ||
        (ts.isQualifiedName(parent) && parent.right === node) ||
        ((ts.isPropertyAssignment(parent) || ts.isPropertySignature(parent)) && parent.name === node)
      if (!isName && !ts.isTypeReferenceNode(parent)) {
        uses.push({ name: node.text, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 })
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return uses
}

/** The reason `path` may not be imported by the main entry, or undefined when it may. */
const forbidden = (path) => {
  if (path.startsWith("node:")) return "a Node built-in"
  const name = path.startsWith("@") ? path.split("/").slice(0, 2).join("/") : path.split("/")[0]
  if (builtins.has(name)) return "a Node built-in"
  if (forbiddenPackages.has(name)) return "a Node-only package"
  return undefined
}

/** Marks every forbidden import external, so the metafile records who imports it. */
const markForbidden = {
  name: "mark-forbidden",
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) =>
      args.kind !== "entry-point" && forbidden(args.path) !== undefined
        ? { path: args.path, external: true }
        : undefined)
  }
}

const result = await build({
  absWorkingDir: root,
  entryPoints: [entry],
  bundle: true,
  write: false,
  metafile: true,
  format: "esm",
  platform: "neutral",
  mainFields: ["module", "main"],
  conditions: ["import", "default"],
  // Optional peers behind their own entries are not this check's business; jsonc-parser is
  // plain JavaScript, imported the way Node's CommonJS interop allows (a default import its ESM
  // build lacks), so it stays external here as in scripts/bundle-cli.mjs.
  external: ["@effect/ai", "ai", "jsonc-parser"],
  plugins: [markForbidden],
  logLevel: "error"
})

const inputs = result.metafile.inputs
/** The first importer of each module, breadth first from the entry: the shortest chain. */
const parent = new Map([[entry, undefined]])
const queue = [entry]
const reached = []
while (queue.length > 0) {
  const from = queue.shift()
  for (const imported of inputs[from]?.imports ?? []) {
    if (imported.external) {
      const reason = forbidden(imported.path)
      if (reason !== undefined) reached.push({ from, path: imported.path, reason })
      continue
    }
    if (parent.has(imported.path)) continue
    parent.set(imported.path, from)
    queue.push(imported.path)
  }
}

const chainTo = (module) => {
  const chain = []
  for (let at = module; at !== undefined; at = parent.get(at)) chain.unshift(at)
  return chain
}

const countSources = (dir) =>
  readdirSync(new URL(`../${dir}`, import.meta.url), { withFileTypes: true }).reduce(
    (n, d) => n + (d.isDirectory() ? countSources(`${dir}/${d.name}`) : d.name.endsWith(".ts") ? 1 : 0),
    0
  )
const loaded = Object.keys(inputs).filter((path) => path.startsWith("src/")).sort()
console.log(`check:neutral: ${entry} loads ${loaded.length} of ${countSources("src")} src modules`)
if (process.argv.includes("--verbose")) { for (const path of loaded) console.log(`  ${path}`) }

const globals = loaded.flatMap((file) =>
  globalUses(file).filter(({ name }) => GLOBALS_PENDING.get(file) !== name).map((use) => ({ file, ...use }))
)
for (const { file, line, name } of globals) {
  console.error(
    `${entry} loads ${file}, which uses the Node global ${name} (line ${line}):\n  ${chainTo(file).join("\n  → ")}`
  )
}

if (reached.length > 0 || globals.length > 0) {
  const seen = new Set()
  for (const { from, path, reason } of reached) {
    const key = `${from} ${path}`
    if (seen.has(key)) continue
    seen.add(key)
    console.error(`${entry} reaches ${reason}, "${path}":\n  ${[...chainTo(from), path].join("\n  → ")}`)
  }
  console.error(
    `\ncheck:neutral: ${seen.size} forbidden import(s), ${globals.length} Node global(s); move the Node side behind mcp-fleet/node.`
  )
  process.exit(1)
}
console.log("check:neutral: the main entry reaches no Node built-in, undici or ws, and uses no Node global")
