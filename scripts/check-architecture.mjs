#!/usr/bin/env node
// Keeps ARCHITECTURE.md a map of src/: short, complete, and naming nothing that is gone.
// `npm run check:architecture`, run in CI by .ci/run.
//
// Only code spans (`...`) count, read entry by entry (an entry is a paragraph, a list item
// with its wrapped lines, or a table row); a leading `src/` is ignored. A module of src/
// (every .ts file under it) is named when:
// - a top-level module, `src/Foo.ts`: a span reads `Foo` or `Foo.ts`;
// - a file in a folder, `src/dir/sub/file.ts`: a span reads its whole path (`dir/sub/file.ts`),
//   or one entry holds a span of one of its folders (`dir/` or `dir/sub/`) and a span of the
//   rest of its path (`sub/file.ts` or `file.ts`). So `internal/mcpClient/` followed by
//   `cache.ts` in one list item names src/internal/mcpClient/cache.ts.
// It fails, naming each problem, on a module not named; on a span that looks like a path (a
// folder `a/b/`, or a file ending in .ts, .mjs, .cjs or .js) but matches no file of the project:
// a bare file name in an entry that names folders must be in one of them, any other path must
// end the path of some file; and on a map over MAX_WORDS words, counted as `wc -w` counts.
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"

const MAX_WORDS = 2500
const SKIP = new Set([".git", "node_modules", "dist", "coverage"])
const root = join(dirname(fileURLToPath(import.meta.url)), "..")

const walk = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    SKIP.has(entry.name) ? [] : entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)]
  )

// Every file of the project as "/dir/file", so a suffix test finds `a/b.ts` under any folder.
const project = walk(root).map((file) => "/" + relative(root, file).split(sep).join("/"))
const modules = project.filter((path) => path.startsWith("/src/") && path.endsWith(".ts")).map((path) =>
  path.slice("/src/".length)
)
const text = readFileSync(join(root, "ARCHITECTURE.md"), "utf8")

const entries = []
for (const line of text.split("\n")) {
  if (entries.length === 0 || line.trim() === "" || /^\s*([-*]|\d+\.)\s|^\s*\|/.test(line)) entries.push([])
  entries.at(-1).push(line)
}
const spans = entries.map((lines) =>
  new Set(
    [...lines.join("\n").matchAll(/`([^`\n]+)`/g)]
      .map((match) => match[1].trim().replace(/^src\//, ""))
      .filter((span) => span !== "")
  )
)
const all = new Set(spans.flatMap((entry) => [...entry]))

const named = (path) => {
  const dirs = path.split("/").slice(0, -1)
  if (dirs.length === 0) return all.has(path) || all.has(path.replace(/\.ts$/, ""))
  if (all.has(path)) return true
  return dirs.some((_, i) => {
    const folder = dirs.slice(0, i + 1).join("/") + "/"
    return spans.some((entry) => entry.has(folder) && entry.has(path.slice(folder.length)))
  })
}

const looksLikePath = (span) => /^[\w.@-]+(\/[\w.@-]+)*(\/|\.(ts|mjs|cjs|js))$/.test(span)
const exists = (path) =>
  project.some((file) => path.endsWith("/") ? file.includes("/" + path) : file.endsWith("/" + path))
const existsIn = (span, folders) =>
  span.includes("/") || folders.length === 0 ? exists(span) : folders.some((folder) => exists(folder + span))

const problems = []
for (const path of modules) {
  if (!named(path)) problems.push(`src/${path} is not named in ARCHITECTURE.md`)
}
for (const entry of spans) {
  const folders = [...entry].filter((span) => span.endsWith("/") && looksLikePath(span))
  for (const span of entry) {
    if (!looksLikePath(span) || existsIn(span, folders)) continue
    const where = span.includes("/") || folders.length === 0 ? "" : ` in ${folders.join(" or ")}`
    problems.push(`ARCHITECTURE.md names \`${span}\`${where}, which does not exist`)
  }
}
const words = text.split(/\s+/).filter((word) => word !== "").length
if (words > MAX_WORDS) problems.push(`ARCHITECTURE.md has ${words} words, over ${MAX_WORDS}: a map, not a chronicle`)

if (problems.length > 0) {
  for (const problem of problems) console.error(problem)
  process.exit(1)
}
console.log(`ARCHITECTURE.md names all ${modules.length} modules of src/, in ${words} words`)
