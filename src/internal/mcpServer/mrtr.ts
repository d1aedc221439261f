/**
 * Multi round-trip requests (2026-07-28, SEP-2322) by replay: a modern request cannot send
 * its client a request, so its handler runs from the start on every round. Each request it
 * asks of the client (`RequestContext.requestClient`, in order, under a key) takes its answer
 * from the round's answers when there is one; else the run stops and the request is answered
 * with an `InputRequiredResult` that asks for everything the run asked for and had no answer
 * to. The answers used so far travel in `requestState`, signed (HMAC-SHA256 with the
 * server's secret) and bound to the request (method, name or URI, arguments), so the client
 * sends only the newest round's.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import { isRecord } from "effect/Predicate"
import * as Runtime from "effect/Runtime"
import type * as Schema from "effect/Schema"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type { RequestClientOptions } from "../../McpServer.js"
import type * as Peer from "../../Peer.js"
import { canonicalDigest } from "../canonicalJson.js"
import { hmacSha256Base64url, textBase64url, textFromBase64, timingSafeEqual } from "../crypto.js"
import { ValidatorCache } from "../jsonSchema.js"
import { McpServerError } from "./error.js"
import { invalidParams } from "./errors.js"

/** The methods whose requests may be answered with an InputRequiredResult. */
export const INPUT_METHODS: ReadonlySet<string> = new Set([
  McpSchema.Method.ToolsCall,
  McpSchema.Method.PromptsGet,
  McpSchema.Method.ResourcesRead
])

/** How a modern request's context asks its client: the round's `ask`. */
export interface Input {
  readonly ask: (
    method: string,
    params: Record<string, unknown> | undefined,
    options: RequestClientOptions | undefined
  ) => Effect.Effect<Record<string, unknown>, McpServerError>
}

/** A request of a method that cannot take input: what it asks of the client fails. */
export const noInput = (method: string): Input => ({
  ask: (asked) =>
    Effect.fail(
      new McpServerError({
        reason: "NotDeclared",
        method: asked,
        message: `${asked}: a ${method} request cannot ask the client for input`
      })
    )
})

// What a request is about: its method, its target and its arguments; a state is good for
// that only, so answers given about one call are never replayed into another.
const subject = (request: JsonRpc.Request): string => {
  const params = request.params
  const target = params?.name ?? params?.uri
  return `${request.method} ${typeof target === "string" ? target : ""} ${canonicalDigest(params?.arguments ?? {})}`
}

const sign = (secret: Uint8Array, body: string) => hmacSha256Base64url(secret, body)

/** The signed state carrying `answers` for `request`. */
export const encodeState = (secret: Uint8Array, request: JsonRpc.Request, answers: Record<string, unknown>): string => {
  const body = textBase64url(JSON.stringify({ s: subject(request), a: answers }))
  return `${body}.${sign(secret, body)}`
}

/** The answers a state carries, or why it is refused (tampered, or another request's). */
export const decodeState = (
  secret: Uint8Array,
  request: JsonRpc.Request,
  state: string
): Either.Either<Record<string, unknown>, string> => {
  const [body, mac, ...rest] = state.split(".")
  if (body === undefined || mac === undefined || rest.length > 0) return Either.left("requestState is malformed")
  if (!timingSafeEqual(mac, sign(secret, body))) {
    return Either.left("requestState failed its integrity check")
  }
  const decoded: unknown = JSON.parse(textFromBase64(body))
  if (!isRecord(decoded) || decoded.s !== subject(request) || !isRecord(decoded.a)) {
    return Either.left("requestState belongs to another request")
  }
  return Either.right(decoded.a)
}

// The forms of elicitations, by requested schema.
const forms = new ValidatorCache(200)

const schemaCheck = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = McpSchema.decodeUnknown(schema)
  return (answer: unknown): string | undefined => Either.isLeft(decode(answer)) ? "does not fit its schema" : undefined
}

type Check = (answer: unknown, params: Record<string, unknown> | undefined) => Effect.Effect<string | undefined>

const shapeCheck = <A, I>(schema: Schema.Schema<A, I>): Check => {
  const check = schemaCheck(schema)
  return (answer) => Effect.succeed(check(answer))
}

const elicitShape = schemaCheck(McpSchema.ElicitResult)

// Why an answer does not answer the request it is given for, or undefined.
const CHECKS: Record<string, Check> = {
  [McpSchema.Method.SamplingCreateMessage]: shapeCheck(McpSchema.CreateMessageResult),
  [McpSchema.Method.RootsList]: shapeCheck(McpSchema.ListRootsResult),
  [McpSchema.Method.ElicitationCreate]: (answer, params) => {
    const shape = elicitShape(answer)
    if (shape !== undefined || !isRecord(answer) || answer.action !== "accept") return Effect.succeed(shape)
    const schema = params?.requestedSchema
    const content = answer.content
    if (!isRecord(schema) || !isRecord(content)) return Effect.succeed(undefined)
    return Effect.map(
      forms.get(schema),
      Either.match({
        onLeft: () => undefined,
        onRight: (validate) => validate(content)
      })
    )
  }
}

/** Why `answer` does not answer a `method` request with `params`, or undefined. */
export const checkAnswer = (
  method: string,
  answer: unknown,
  params: Record<string, unknown> | undefined
): Effect.Effect<string | undefined> =>
  isRecord(answer) ? CHECKS[method]?.(answer, params) ?? Effect.succeed(undefined) : Effect.succeed("is not an object")

/** One round of a modern request that may take input. */
export class Round implements Input {
  private index = 0
  // The keys this run asked under: each names one request.
  private readonly keys = new Set<string>()
  /** What the run asked and had no answer to, by key. */
  readonly asked: Record<string, { method: string; params: Record<string, unknown> }> = {}
  /** The answers the run used, by key: the next round's state. */
  readonly used: Record<string, unknown> = {}
  /** An answer that does not answer its request. */
  refused: Peer.HandlerError | undefined = undefined
  /** Whether the run stopped: it asked what it has no answer to, or an answer did not fit. */
  halted = false
  // Told once when the run stops (`run` waits on it); the Deferred only when someone asks for it.
  private onHalt: (() => void) | undefined = undefined
  private deferred: Deferred.Deferred<void> | undefined = undefined

  constructor(readonly answers: Record<string, unknown>) {}

  /** Completes once the run stopped. Made when first asked for: most runs never stop. */
  get stopped(): Deferred.Deferred<void> {
    if (this.deferred === undefined) {
      this.deferred = Deferred.unsafeMake<void>(FiberId.none)
      if (this.halted) Deferred.unsafeDone(this.deferred, Exit.void)
    }
    return this.deferred
  }

  /** Calls `f` once the run stops (at once if it did); one listener, `run`'s. */
  whenHalted(f: () => void): void {
    if (this.halted) f()
    else this.onHalt = f
  }

  // The run stops here: whoever waits is told, and the asking fiber waits for its end.
  private halt(): Effect.Effect<never> {
    return Effect.suspend(() => {
      if (!this.halted) {
        this.halted = true
        if (this.deferred !== undefined) Deferred.unsafeDone(this.deferred, Exit.void)
        this.onHalt?.()
      }
      return Effect.never
    })
  }

  // The key asked for when no other request of the run took it (a gateway passes on the keys
  // of the servers it fronts, which know nothing of each other's), else `input-<n>`, its place
  // in the run; the run is the same on every round, so are its keys.
  private keyOf(asked: string | undefined): string {
    let key = asked !== undefined && !this.keys.has(asked) ? asked : `input-${this.index}`
    for (let n = 2; this.keys.has(key); n++) key = `input-${this.index}-${n}`
    this.keys.add(key)
    return key
  }

  /** How many requests the run made so far. */
  get count(): number {
    return this.index
  }

  ask(
    method: string,
    params: Record<string, unknown> | undefined,
    options: RequestClientOptions | undefined
  ): Effect.Effect<Record<string, unknown>, McpServerError> {
    return Effect.suspend(() => {
      this.index += 1
      const key = this.keyOf(options?.key)
      if (!Object.hasOwn(this.answers, key)) {
        this.asked[key] = { method, params: params ?? {} }
        return this.halt()
      }
      const answer = this.answers[key]
      return Effect.flatMap(checkAnswer(method, answer, params), (problem) => {
        if (problem !== undefined) {
          this.refused = invalidParams(`inputResponses.${key} (${method}) ${problem}`)
          return this.halt()
        }
        this.used[key] = answer
        return Effect.succeed(answer as Record<string, unknown>)
      })
    })
  }
}

/** The round of `request`: its answers from its `requestState` and `inputResponses`, or -32602. */
export const begin = (secret: Uint8Array, request: JsonRpc.Request): Either.Either<Round, Peer.HandlerError> => {
  const params = request.params ?? {}
  const responses = params.inputResponses
  if (responses !== undefined && !isRecord(responses)) {
    return Either.left(invalidParams("inputResponses must be an object"))
  }
  const state = params.requestState
  if (state !== undefined && typeof state !== "string") {
    return Either.left(invalidParams("requestState must be a string"))
  }
  const prior = state === undefined ? Either.right({}) : decodeState(secret, request, state)
  return Either.match(prior, {
    onLeft: (problem) => Either.left(invalidParams(problem)),
    onRight: (answers) => Either.right(new Round({ ...answers, ...responses }))
  })
}

// The run's other fibers get their turn before a round closes, so requests asked at once
// (`Effect.all` with concurrency) are gathered in one InputRequiredResult: it closes once
// the scheduler has turned QUIET times with no new request. One asked after real waiting
// (a timer, I/O) comes in the next round, which costs a round trip, never correctness.
const QUIET = 16

const settle = (round: Round, seen = round.count, quiet = 0): Effect.Effect<void> =>
  quiet === QUIET
    ? Effect.void
    : Effect.flatMap(
      Effect.yieldNow(),
      () => round.count === seen ? settle(round, seen, quiet + 1) : settle(round, round.count, 0)
    )

/**
 * Runs a request's handler for one round: its result, or the InputRequiredResult asking
 * for what it had no answer to (the handler's run interrupted), or -32602 for an answer
 * that does not fit. The handler runs in a fiber of its own, started at once: one that ends
 * without waiting (most do) is answered right there, with no race and no fiber hop; one
 * that waits is waited on until it ends or the round stops. A request to the client may come
 * from any fiber (a fronted server's, through the gateway), so the run is stopped from
 * outside, by interrupting that fiber.
 */
export const run = <E>(
  secret: Uint8Array,
  request: JsonRpc.Request,
  round: Round,
  handler: Effect.Effect<Record<string, unknown>, E>
): Effect.Effect<Record<string, unknown>, E | Peer.HandlerError> =>
  Effect.flatMap(Effect.runtime<never>(), (runtime) => {
    const fiber = Runtime.runFork(runtime)(handler)
    const ended = fiber.unsafePoll()
    if (ended !== null) return ended
    const stop = Effect.suspend((): Effect.Effect<Record<string, unknown>, E | Peer.HandlerError> => {
      const done = fiber.unsafePoll()
      if (done !== null) return done
      return Effect.zipRight(Fiber.interrupt(fiber), inputRequired(secret, request, round))
    })
    return Effect.async<void>((resume) => {
      let woken = false
      const wake = () => {
        if (woken) return
        woken = true
        resume(Effect.void)
      }
      fiber.addObserver(wake)
      round.whenHalted(wake)
    }).pipe(
      // Requests asked at once (`Effect.all` with concurrency) are gathered in one round.
      Effect.zipRight(
        Effect.suspend(() => fiber.unsafePoll() !== null || round.refused !== undefined ? Effect.void : settle(round))
      ),
      Effect.zipRight(stop),
      Effect.onInterrupt(() => Fiber.interrupt(fiber))
    )
  })

// What the stopped run asked for, or the answer that did not fit.
const inputRequired = (
  secret: Uint8Array,
  request: JsonRpc.Request,
  round: Round
): Effect.Effect<Record<string, unknown>, Peer.HandlerError> =>
  round.refused !== undefined
    ? Effect.fail(round.refused)
    : Effect.succeed({
      resultType: "input_required",
      inputRequests: round.asked,
      requestState: encodeState(secret, request, round.used)
    })
