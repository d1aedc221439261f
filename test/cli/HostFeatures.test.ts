import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as HostFeatures from "../../src/cli/HostFeatures.js"
import type * as McpSchema from "../../src/McpSchema.js"
import { margin, waitGone, within } from "../support/processes.js"

const SAMPLER = fileURLToPath(new URL("../fixtures/sampler.mjs", import.meta.url))

const hero = { type: "string", oneOf: [{ const: "hero-1", title: "Superman" }, { const: "hero-2", title: "Batman" }] }
const fish = { type: "array", items: { anyOf: [{ const: "f1", title: "Tuna" }, { const: "f2", title: "Trout" }] } }

describe("HostFeatures", () => {
  it("types an answer from the field's schema", () => {
    const right = (property: Record<string, unknown>, answer: string) =>
      Either.getOrThrow(HostFeatures.parseField(property, answer))
    const left = (property: Record<string, unknown>, answer: string) =>
      Either.getLeft(HostFeatures.parseField(property, answer))
    expect(right({ type: "boolean" }, "Yes")).toBe(true)
    expect(right({ type: "boolean" }, "n")).toBe(false)
    expect(left({ type: "boolean" }, "maybe")).toEqual(expect.objectContaining({ value: "answer yes or no" }))
    expect(right({ type: "integer" }, " 7 ")).toBe(7)
    expect(left({ type: "integer" }, "7.5")).toEqual(expect.objectContaining({ value: "type a whole number" }))
    expect(right({ type: "number" }, "3.14")).toBe(3.14)
    expect(right({ type: "string" }, " kept as typed ")).toBe(" kept as typed ")
    // SEP-1330: titled single select by number, value or title; legacy enumNames; multi-select.
    expect(right(hero, "2")).toBe("hero-2")
    expect(right(hero, "hero-1")).toBe("hero-1")
    expect(right(hero, "batman")).toBe("hero-2")
    expect(left(hero, "3")).toEqual(expect.objectContaining({ value: "choose one of 1-2, or type a value" }))
    expect(right({ type: "string", enum: ["p1", "p2"], enumNames: ["Cats", "Dogs"] }, "Dogs")).toBe("p2")
    expect(right(fish, "1, Trout")).toEqual(["f1", "f2"])
    expect(right({ type: "array", items: { type: "string", enum: ["a", "b"] } }, "b,a")).toEqual(["b", "a"])
  })

  it("shows a field's title, description, choices and default", () => {
    expect(
      HostFeatures.fieldQuestion("hero", { ...hero, title: "Hero", description: "pick one", default: "hero-1" }, true)
    )
      .toBe(
        "  Hero * — pick one\n    1) Superman (hero-1)\n    2) Batman (hero-2)\n  (a number; default: Superman) > "
      )
    expect(HostFeatures.fieldQuestion("age", { type: "integer" }, false)).toBe("  age\n  (integer) > ")
  })

  describe("askForm", () => {
    const form: McpSchema.ElicitFormParams = {
      message: "Tell me",
      requestedSchema: {
        type: "object",
        properties: { name: { type: "string" }, age: { type: "integer", default: 3 }, hero },
        required: ["name"]
      }
    }
    const scripted = (answers: Array<string | undefined>) => {
      const asked: Array<string> = []
      const ask = (text: string) => Effect.sync(() => (asked.push(text), answers.shift()))
      return { asked, form: HostFeatures.askForm(ask) }
    }

    it.effect("accepts what was typed, leaves out what was skipped, and asks again what does not fit", () =>
      Effect.gen(function*() {
        const { asked, form: ask } = scripted(["", "Ada", "", "three", "2", ""])
        const result = yield* ask(form, "srv")
        expect(result).toEqual({ action: "accept", content: { name: "Ada", hero: "hero-2" } })
        expect(asked[1]).toBe("  an answer is required > ")
        expect(asked.at(-1)).toBe("  send to 'srv'? [Y/n] ")
      }))

    it.effect("declines on n at the end, and cancels on Ctrl-D anywhere", () =>
      Effect.gen(function*() {
        expect(yield* scripted(["Ada", "", "", "n"]).form(form, "srv")).toEqual({ action: "decline" })
        expect(yield* scripted(["Ada", undefined]).form(form, "srv")).toEqual({ action: "cancel" })
        expect(yield* scripted(["Ada", "", "", undefined]).form(form, "srv")).toEqual({ action: "cancel" })
      }))
  })

  describe("samplingByCommand", () => {
    const context = { server: "srv", progress: () => Effect.void }
    const request: McpSchema.CreateMessageRequestParams = {
      messages: [{ role: "user", content: { type: "text", text: "hi" } }],
      systemPrompt: "terse",
      maxTokens: 5
    }
    const node = (args: ReadonlyArray<string>, timeout?: Duration.Duration) =>
      HostFeatures.samplingByCommand({ command: process.execPath, args, cwd: os.tmpdir(), timeout })

    it.live("sends the params on stdin and reads the answer from stdout", () =>
      Effect.gen(function*() {
        const result = yield* node([SAMPLER]).createMessage(request, context)
        expect(result).toEqual({
          role: "assistant",
          content: { type: "text", text: "sampled for srv: hi (system: terse)" },
          model: "fixture-model",
          stopReason: "endTurn"
        })
      }))

    it.live("fails with what went wrong: an exit code with stderr, output that is not JSON, a missing command", () =>
      Effect.gen(function*() {
        const failed = yield* Effect.flip(
          node(["-e", "console.error('no model'); process.exit(3)"]).createMessage(request, context)
        )
        expect(failed.message).toBe("the sampling command exited with code 3: no model")
        const garbled = yield* Effect.flip(
          node(["-e", "process.stdout.write('hello')"]).createMessage(request, context)
        )
        expect(garbled.message).toBe("the sampling command did not write JSON on stdout")
        const missing = yield* Effect.flip(
          HostFeatures.samplingByCommand({ command: "/nonexistent/llm", args: [], cwd: os.tmpdir() })
            .createMessage(request, context)
        )
        expect(missing.message).toContain("the sampling command '/nonexistent/llm' could not start")
      }))

    it.live("ends the command when the request is given up or takes too long", () =>
      Effect.gen(function*() {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-sampler-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        const pidFile = path.join(dir, "pid")
        const hang = [
          "-e",
          `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`
        ]
        const fiber = yield* Effect.fork(node(hang).createMessage(request, context))
        const started = () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8") !== ""
        const wait = yield* margin(5000)
        expect(yield* Effect.promise(() => within(started, wait))).toBeDefined()
        const pid = Number(fs.readFileSync(pidFile, "utf8"))
        yield* Fiber.interrupt(fiber)
        expect((yield* waitGone([pid], 5000))[pid]).not.toBe("alive")

        fs.rmSync(pidFile)
        // Long enough for node to start and write its pid, however loaded the machine is now
        // (whole seconds, as the message says them).
        const limit = Duration.seconds(Math.ceil((yield* margin(2000)) / 1000))
        const slow = yield* Effect.exit(node(hang, limit).createMessage(request, context))
        expect(Exit.isFailure(slow) && String(slow.cause)).toContain(`took longer than ${Duration.format(limit)}`)
        const slowPid = Number(fs.readFileSync(pidFile, "utf8"))
        expect((yield* waitGone([slowPid], 5000))[slowPid]).not.toBe("alive")
      }).pipe(Effect.scoped))
  })
})
