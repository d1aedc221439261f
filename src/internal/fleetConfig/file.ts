/**
 * One config file's text to its servers and policy: JSON with comments decoded against the
 * file schema, each entry turned into a spec with the variables, inputs and env files known
 * so far, and what is still missing (inputs to ask for, env files to read) reported so that
 * the loader can supply it and read the file again.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Catalog from "../../Catalog.js"
import type * as FleetConfig from "../../FleetConfig.js"
import * as Policy from "../../Policy.js"
import * as Jsonc from "../jsonc.js"
import { homeOf, type PathOps } from "../platform.js"
import type * as EnvFile from "./envFile.js"
import * as Hosts from "./hosts.js"
import * as Issues from "./issues.js"
import * as FileSchema from "./schema.js"
import * as Spec from "./spec.js"
import { inputVariable } from "./variables.js"

/** A file's JSON checked against the schema; the reason it cannot be used otherwise. */
export const decode = (text: string): Either.Either<FileSchema.ConfigFile, string> => {
  const json = Jsonc.parse(text.replace(/^\uFEFF/, ""))
  if (Either.isLeft(json)) return Either.left(`not valid JSON: ${Jsonc.describe(json.left)}`)
  const decoded = FileSchema.decode(json.right)
  if (Either.isLeft(decoded)) return Either.left(Issues.sentences(decoded.left).join("; "))
  // Checked here rather than as a Schema filter, whose error would wrap every other one.
  if (decoded.right.mcpServers === undefined && decoded.right.servers === undefined) {
    return Either.left(`expected an object with "mcpServers" or "servers"`)
  }
  return Either.right(decoded.right)
}

/** What is known besides the environment: answers to `${input:id}`, and env files read. */
export interface Resolved {
  readonly inputs: ReadonlyMap<string, string>
  readonly envFiles: ReadonlyMap<string, EnvFile.Parsed>
}

/** A file read with what was known, and what was found missing. */
export interface Read {
  readonly parsed: FleetConfig.Parsed
  /** Ids of `${input:id}` with no value. */
  readonly unanswered: ReadonlySet<string>
  /** Env files named by entries and not in `Resolved` yet. */
  readonly unread: ReadonlySet<string>
}

const policyOf = (file: FileSchema.ConfigFile, dir: string, path: PathOps): Policy.Config => {
  const { audit, auditKey, ...rules } = file.policy ?? {}
  const global: Policy.Config = {
    ...rules,
    ...(audit === undefined ? {} : { audit: path.resolve(dir, audit) }),
    ...(auditKey === undefined ? {} : { auditKey: path.resolve(dir, auditKey) })
  }
  return [...Object.entries(file.mcpServers ?? {}), ...Object.entries(file.servers ?? {})].reduce(
    (config, [name, entry]) =>
      entry.policy === undefined ? config : Policy.merge(config, { servers: { [name]: entry.policy } }),
    global
  )
}

const samplingOf = (file: FileSchema.ConfigFile, dir: string): Pick<FleetConfig.Parsed, "sampling"> => {
  if (file.sampling === undefined) return {}
  const { args, command, timeout } = file.sampling
  return {
    sampling: {
      command,
      args: args ?? [],
      cwd: dir,
      ...(timeout === undefined ? {} : { timeout: Duration.millis(timeout) })
    }
  }
}

/** The servers and policy of a decoded file at `path`, with the platform's path operations `paths`. */
export const read = (
  file: FileSchema.ConfigFile,
  path: string,
  env: FleetConfig.Env,
  resolved: Resolved,
  paths: PathOps
): Read => {
  const dir = paths.dirname(paths.resolve(path))
  const context: Omit<Spec.Context, "problems"> = {
    env,
    path: paths,
    workspace: Hosts.workspaceOf(dir, paths),
    home: homeOf(env),
    inputs: resolved.inputs,
    envFiles: resolved.envFiles,
    unanswered: new Set(),
    unread: new Set()
  }
  const defaults = {
    ...file.defaults,
    ...(file.pinning === undefined ? {} : { pinning: file.pinning }),
    ...(file.sanitize === undefined ? {} : { sanitize: file.sanitize }),
    ...(file.lazy === undefined ? {} : { lazy: file.lazy })
  }
  const fromMcpServers = Object.entries(file.mcpServers ?? {})
  const inServers = new Set(Object.keys(file.servers ?? {}))
  const twice = new Set(fromMcpServers.map(([name]) => name).filter((name) => inServers.has(name)))
  const fromServers = Object.entries(file.servers ?? {}).filter(([name]) => !twice.has(name))
  const servers = [...fromMcpServers, ...fromServers].map(([name, entry]) => // Pins are kept per file and entry (ToolPins.identity).
  ({
    ...Spec.toSpec(
      name,
      entry,
      defaults,
      context,
      twice.has(name) ? [`defined in both "mcpServers" and "servers"`] : []
    ),
    origin: paths.resolve(path)
  }))
  const warnings = servers.flatMap((spec) => {
    const problem = Catalog.serverNameProblem(spec.name)
    return problem === undefined ? [] : [`server name '${spec.name}' in ${path} ${problem}`]
  })
  return {
    parsed: { servers, policy: policyOf(file, dir, paths), warnings, ...samplingOf(file, dir) },
    unanswered: context.unanswered,
    unread: context.unread
  }
}

/** The prompt for `${input:id}`, from the file's `inputs` entry of that id when there is one. */
export const inputRequest = (file: FileSchema.ConfigFile, id: string): FleetConfig.InputRequest => {
  const input = file.inputs?.find((candidate) => candidate.id === id)
  return { id, description: input?.description, password: input?.password === true, variable: inputVariable(id) }
}
