// Bundles the `mcp-fleet` command (after `tsc` has built dist/) into dist/cli/bundle/: one
// file to load instead of about a thousand modules, so a command starts in a third of the
// time. `bin.js` stays tiny and answers `--version` without loading the rest (a chunk).
import { build } from "esbuild"

await build({
  entryPoints: ["dist/cli/bin.js"],
  outdir: "dist/cli/bundle",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  // ESM builds of dependencies where they have one; jsonc-parser's is not importable the
  // way Node's CommonJS interop imports it, so it stays a dependency loaded at run time,
  // as do ws's optional native helpers.
  mainFields: ["module", "main"],
  external: ["jsonc-parser", "bufferutil", "utf-8-validate"],
  minifySyntax: true,
  minifyWhitespace: true,
  // Some bundled CommonJS dependencies call require(); give them one.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: "warning"
})
