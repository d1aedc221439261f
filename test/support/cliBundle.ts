// Where the test run's CLI bundle is: under node_modules/.cache, rebuilt by every run, in a
// folder keyed by the checkout so that worktrees sharing one node_modules do not overwrite it.
import { createHash } from "node:crypto"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))
const checkout = createHash("sha256").update(root).digest("hex").slice(0, 12)

/** The directory of the CLI bundle built by the test run's global setup. */
export const CLI_BUNDLE = path.join(root, "node_modules/.cache/mcp-fleet-test", checkout, "cli")
