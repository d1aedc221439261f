#!/usr/bin/env node
/**
 * The `mcp-fleet` executable: answers `--version` before anything else is loaded (a host
 * probing for the command should not wait for the whole CLI), and runs the CLI otherwise.
 *
 * @since 0.1.0
 */
import { VERSION } from "./version.js"

if (process.argv.length === 3 && (process.argv[2] === "--version" || process.argv[2] === "-v")) {
  process.stdout.write(`${VERSION}\n`)
} else {
  await import("./main.js")
}
