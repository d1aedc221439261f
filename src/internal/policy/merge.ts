/**
 * Merging policy configs of several files: rules add up, limits are overridden field by
 * field, and a `default` only ever gets stricter.
 *
 * @internal
 */
import type * as Policy from "../../Policy.js"
import { stricter } from "./rules.js"

const concat = (a: ReadonlyArray<string> | undefined, b: ReadonlyArray<string> | undefined) =>
  a === undefined ? b : b === undefined ? a : [...a, ...b]

const mergeLimits = (a: Policy.Limits | undefined, b: Policy.Limits | undefined): Policy.Limits | undefined =>
  a === undefined ? b : b === undefined ? a : { ...a, ...b }

const mergeRecords = <A>(
  a: Readonly<Record<string, A>> | undefined,
  b: Readonly<Record<string, A>> | undefined,
  f: (a: A | undefined, b: A | undefined) => A | undefined
): Readonly<Record<string, A>> | undefined => {
  if (a === undefined || b === undefined) return a ?? b
  const merged: Record<string, A> = { ...a }
  for (const [key, value] of Object.entries(b)) merged[key] = f(a[key], value)!
  return merged
}

const dropUndefined = <A extends object>(value: A): A =>
  Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as A

const mergeRules = (a: Policy.Rules | undefined, b: Policy.Rules | undefined): Policy.Rules | undefined =>
  a === undefined ? b : b === undefined ? a : dropUndefined({
    allow: concat(a.allow, b.allow),
    deny: concat(a.deny, b.deny),
    ask: concat(a.ask, b.ask),
    default: stricter(a.default, b.default),
    limits: mergeLimits(a.limits, b.limits),
    tools: mergeRecords(a.tools, b.tools, mergeLimits)
  })

/** See `Policy.merge`. */
export const merge = (a: Policy.Config, b: Policy.Config): Policy.Config =>
  dropUndefined({
    ...mergeRules(a, b),
    servers: mergeRecords(a.servers, b.servers, mergeRules),
    audit: b.audit ?? a.audit,
    auditKey: b.auditKey ?? a.auditKey
  })
