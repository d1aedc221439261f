// A real browser for the dashboard's tests: Debian's chromium (installed by
// scripts/ensure-chromium.sh, which .ci/run calls) driven by playwright-core, which downloads
// nothing. One browser per test file, with a fresh profile in a temp folder removed on close.
// Without chromium the test fails, saying how to install it: it never skips silently.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type BrowserContext, chromium } from "playwright-core"

/** Where Debian installs chromium. */
export const CHROMIUM = "/usr/bin/chromium"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** The folder of screenshots a test run keeps (gitignored). */
export const SCREENSHOTS = path.join(root, "test-output", "screenshots")

/** A browser with a profile of its own; `close` ends it and removes the profile. */
export interface Browser {
  readonly context: BrowserContext
  readonly close: () => Promise<void>
}

export const launch = async (): Promise<Browser> => {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: the dashboard's browser tests need Debian's chromium; ` +
        "install it with scripts/ensure-chromium.sh (apt-get install -y chromium)"
    )
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  }).catch((error) => {
    fs.rmSync(profile, { recursive: true, force: true })
    throw error
  })
  return {
    context,
    close: async () => {
      await context.close()
      fs.rmSync(profile, { recursive: true, force: true })
    }
  }
}
