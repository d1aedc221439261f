/**
 * JSON Schema validation for tool schemas, with Ajv. The draft is chosen by `$schema`
 * (2020-12 when absent, as MCP specifies); compiled validators are cached by schema text,
 * so a schema seen again on a later listing is not compiled again. A `$ref` is resolved
 * within the schema only (`#/$defs/...`): Ajv is given no `loadSchema`, so a `$ref` to a
 * network URI is never fetched (SEP-2106) — such a schema does not compile, and is reported
 * as one that cannot be checked.
 *
 * Ajv is loaded when the first schema is compiled, not at import: most connections never
 * validate a schema (only outputSchemas, policy argument checks and elicitation forms do), and
 * they need not keep its modules resident.
 *
 * @internal
 */
import type { Ajv, ErrorObject, Options, ValidateFunction } from "ajv"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

/** Checks a value; returns undefined when it is valid, else what is wrong. */
export type Validator = (value: unknown) => string | undefined

const options: Options = {
  strict: false,
  allErrors: true,
  validateFormats: false,
  // Many servers reuse `$id`s across tools; keep each compile independent.
  addUsedSchema: false,
  // An argument named `toString` or `constructor` is there only when given, not inherited.
  ownProperties: true
}

type Draft = "2020-12" | "2019-09" | "draft-07"

const draftOf = (schema: Record<string, unknown>): Draft | undefined => {
  const id = schema.$schema
  if (typeof id !== "string") return "2020-12"
  if (id.includes("2020-12")) return "2020-12"
  if (id.includes("2019-09")) return "2019-09"
  if (/draft-0[4-7]/.test(id)) return "draft-07"
  return undefined
}

const describe = (errors: ReadonlyArray<ErrorObject> | null | undefined): string =>
  (errors ?? []).slice(0, 5).map((error) => `${error.instancePath || "(root)"} ${error.message ?? "is invalid"}`).join(
    "; "
  )

/** Ajv's constructor of each draft. */
type Engines = Record<Draft, new(options: Options) => Ajv>

let loading: Promise<Engines> | undefined

/**
 * Ajv's modules, imported once, on first use. They are CommonJS, whose exports object is the
 * constructor: Node's import also gives it as a named export, a bundle's (esbuild) as `default` only.
 */
const engines: Effect.Effect<Engines> = Effect.promise(() =>
  loading ??= Promise.all([import("ajv"), import("ajv/dist/2019.js"), import("ajv/dist/2020.js")]).then((
    [draft07, draft2019, draft2020]
  ) => ({
    "draft-07": draft07.Ajv ?? draft07.default,
    "2019-09": draft2019.Ajv2019 ?? draft2019.default,
    "2020-12": draft2020.Ajv2020 ?? draft2020.default
  }))
)

/** A bounded cache of compiled validators. */
export class ValidatorCache {
  private readonly engines = new Map<Draft, Ajv>()
  private readonly compiled = new Map<string, Either.Either<Validator, string>>()
  constructor(readonly capacity = 1000) {}

  /** The validator for a schema, or why the schema cannot be compiled (loading Ajv the first time). */
  get(schema: Record<string, unknown>): Effect.Effect<Either.Either<Validator, string>> {
    const key = JSON.stringify(schema)
    const cached = this.compiled.get(key)
    if (cached) return Effect.succeed(cached)
    return Effect.map(engines, (constructors) => {
      const result = this.compile(constructors, schema)
      if (this.compiled.size >= this.capacity) this.compiled.delete(this.compiled.keys().next().value!)
      this.compiled.set(key, result)
      return result
    })
  }

  private engine(constructors: Engines, draft: Draft): Ajv {
    let engine = this.engines.get(draft)
    if (!engine) {
      engine = new constructors[draft](options)
      this.engines.set(draft, engine)
    }
    return engine
  }

  private compile(constructors: Engines, schema: Record<string, unknown>): Either.Either<Validator, string> {
    const draft = draftOf(schema)
    // An unknown meta-schema URL: validate with 2020-12 rules rather than refuse.
    const { $schema: _, ...rest } = schema
    const source = draft === undefined ? rest : schema
    let validate: ValidateFunction
    try {
      validate = this.engine(constructors, draft ?? "2020-12").compile(source)
    } catch (error) {
      return Either.left(error instanceof Error ? error.message : String(error))
    }
    return Either.right((value) => (validate(value) ? undefined : describe(validate.errors)))
  }
}
