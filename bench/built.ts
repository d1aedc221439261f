/**
 * The built `mcp-fleet` command for the benches that run it: `dist/cli/bundle/bin.js`, built
 * first (`npm run build`) when it is missing or older than a file of src/.
 *
 * @module
 */
import { execFileSync } from "node:child_process"
import { statSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

/** The path of the built command's entry, built now if it is missing or stale. */
export const builtCli = (): string => {
  const bin = path.join(root, "dist/cli/bundle/bin.js")
  const stale = (() => {
    try {
      statSync(bin)
      return execFileSync("find", [path.join(root, "src"), "-type", "f", "-newer", bin], { encoding: "utf8" })
        .trim() !== ""
    } catch {
      return true
    }
  })()
  if (stale) {
    process.stderr.write("building the CLI (npm run build)...\n")
    execFileSync("npm", ["run", "-s", "build"], { cwd: root, stdio: "inherit" })
  }
  return bin
}
