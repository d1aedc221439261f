// Every command's help page, rendered in this process as the CLI prints it for
// `mcp-fleet <command> --help` (test/e2e/cli.test.ts runs the overview and the routing of
// `--help` and `-h` through the real command): usage, and every option and argument
// described in our words.
import { describe, expect, it } from "@effect/vitest"
import * as Auth from "../../src/cli/commands/auth.js"
import * as Edit from "../../src/cli/commands/edit.js"
import * as Get from "../../src/cli/commands/get.js"
import * as Importing from "../../src/cli/commands/importing.js"
import * as Inspect from "../../src/cli/commands/inspect.js"
import * as Invoke from "../../src/cli/commands/invoke.js"
import * as Probe from "../../src/cli/commands/probe.js"
import * as Serve from "../../src/cli/commands/serve.js"
import * as Session from "../../src/cli/commands/session.js"
import * as Trust from "../../src/cli/commands/trust.js"
import * as Watch from "../../src/cli/commands/watch.js"
import * as Help from "../../src/cli/Help.js"
import { undescribed } from "../support/help.js"

const commands: Record<string, Help.AnyCommand> = {
  servers: Inspect.servers,
  tools: Inspect.tools,
  call: Invoke.call,
  resources: Inspect.resources,
  read: Invoke.read,
  prompts: Inspect.prompts,
  prompt: Invoke.prompt,
  add: Edit.add,
  remove: Edit.remove,
  enable: Edit.enable,
  disable: Edit.disable,
  test: Probe.test,
  watch: Watch.watch,
  serve: Serve.serve,
  trust: Trust.trust,
  approve: Trust.approve,
  auth: Auth.auth,
  get: Get.get,
  "add-json": Edit.addJson,
  import: Importing.importServers,
  ping: Session.ping,
  complete: Session.complete,
  "log-level": Session.logLevel,
  subscribe: Session.subscribe
}

describe("Help", () => {
  it.each(Object.entries(commands))(
    "%s: usage, and every option and argument described in our words",
    (name, command) => {
      const help = Help.command(command, false)
      expect(help).toContain(`USAGE\n  mcp-fleet ${name} `)
      expect(undescribed(help)).toEqual([])
      for (
        const generic of ["A user-defined piece of text", "A true or false value", "This setting", "This argument"]
      ) {
        expect(help).not.toContain(generic)
      }
      expect(help).not.toMatch(/--wizard|--completions/)
      expect(help).not.toContain("\x1b[")
    }
  )
})
