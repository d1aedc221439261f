/**
 * The `mcp-fleet` command itself, holding the global options; each subcommand reads them
 * through it and may repeat them after its own name.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import type * as CliError from "./CliError.js"
import * as Settings from "./Settings.js"

/**
 * The root command, without subcommands (those are attached in `main`).
 *
 * @since 0.1.0
 */
export const root = Command.make("mcp-fleet", Settings.options).pipe(
  Command.withDescription("Run, inspect and serve a fleet of MCP servers from a config file.")
)

/**
 * The settings of a subcommand: its own global options over the root's.
 *
 * @since 0.1.0
 */
export const settings = (
  given: Settings.Given
): Effect.Effect<Settings.Settings, CliError.CliError, FileSystem.FileSystem | Command.Command.Context<"mcp-fleet">> =>
  Effect.flatMap(root, (parent) => Settings.resolve(Settings.merge(parent, given)))
