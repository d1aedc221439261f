// Where the test run's CLI bundle is: under node_modules/.cache, rebuilt by every run.
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** The directory of the CLI bundle built by the test run's global setup. */
export const CLI_BUNDLE = path.join(root, "node_modules/.cache/mcp-fleet-test/cli")
