/**
 * `--help`, in our words: the usage as `mcp-fleet <command> ...`, each command's description,
 * and every argument and option with the description it was given, without @effect/cli's
 * generic notes ("A user-defined piece of text") and built-ins we do not offer (`--wizard`,
 * `--completions`). Bold headings on a terminal only: plain text when stdout is not a
 * terminal or `NO_COLOR` is set.
 *
 * @since 0.1.0
 */
import * as CliConfig from "@effect/cli/CliConfig"
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import type * as Span from "@effect/cli/HelpDoc/Span"
import * as Usage from "@effect/cli/Usage"
import type * as ValidationError from "@effect/cli/ValidationError"
import * as Catalog from "../Catalog.js"
import * as CliError from "./CliError.js"
import * as Settings from "./Settings.js"

/**
 * Any command, whatever it needs and gives.
 *
 * @since 0.1.0
 */
export type AnyCommand = Command.Command<any, any, any, any>

// The commands' own options only: the built-ins are described below, in our words.
const config = CliConfig.make({ showBuiltIns: false })

const textOf = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Highlight":
    case "Weak":
    case "Strong":
      return textOf(span.value)
    case "Sequence":
      return textOf(span.left) + textOf(span.right)
  }
}

const flatten = (doc: HelpDoc.HelpDoc): ReadonlyArray<HelpDoc.HelpDoc> =>
  doc._tag === "Sequence" ? [...flatten(doc.left), ...flatten(doc.right)] : doc._tag === "Empty" ? [] : [doc]

/** One argument or option: how it is written, and what it is. */
interface Item {
  readonly usage: string
  readonly description: string
}

// The section's items. Each definition is @effect/cli's note on the value's type, then the
// description we gave, then its notes on optionality and repetition: only ours is kept.
const itemsOf = (blocks: ReadonlyArray<HelpDoc.HelpDoc>): ReadonlyArray<Item> =>
  blocks.flatMap((block) =>
    block._tag === "DescriptionList"
      ? block.definitions.map(([span, doc]) => {
        const ours = flatten(doc)[1]
        return { usage: textOf(span), description: ours?._tag === "Paragraph" ? textOf(ours.value) : "" }
      })
      : []
  )

// A flag's negation (`--modern` of `--no-modern`) gets the flag's own description from
// @effect/cli, which then says the opposite of what it does: it is described as the opposite.
const negations = (items: ReadonlyArray<Item>): ReadonlyArray<Item> =>
  items.map((item, i) =>
    i > 0 && item.description !== "" && item.description === items[i - 1]!.description
      ? { ...item, description: `The opposite of ${items[i - 1]!.usage}, and the default` }
      : item
  )

/** A command's help as @effect/cli describes it: its description, arguments and options. */
interface Parts {
  readonly description: string
  readonly args: ReadonlyArray<Item>
  readonly options: ReadonlyArray<Item>
}

const partsOf = (command: AnyCommand): Parts => {
  const blocks = flatten(Command.getHelp(command, config))
  const section = (title: string) => {
    const start = blocks.findIndex((block) => block._tag === "Header" && textOf(block.value) === title)
    if (start === -1) return []
    const end = blocks.findIndex((block, i) => i > start && block._tag === "Header")
    return blocks.slice(start + 1, end === -1 ? undefined : end)
  }
  const description = section("DESCRIPTION").map((block) => block._tag === "Paragraph" ? textOf(block.value) : "")
  return {
    description: description.join(" "),
    args: itemsOf(section("ARGUMENTS")),
    options: negations(itemsOf(section("OPTIONS")))
  }
}

// The options @effect/cli runs itself (or main does), in our words.
const builtIns: ReadonlyArray<Item> = [
  { usage: `--log-level ${Settings.logLevels.join(" | ")}`, description: Settings.logLevelDescription },
  { usage: "(-h, --help)", description: "Show this help" }
]

const version: Item = { usage: "(-v, --version)", description: "Print mcp-fleet's version" }

// @effect/cli writes a repeatable option or argument, which may be left out, as if it were
// required (`--root folder...`): in brackets, as the others that may be left out.
const optionalRepeats = (usage: string, items: ReadonlyArray<Item>): string =>
  items.filter((item) => item.usage.endsWith("...")).reduce(
    (text, item) => text.split(item.usage).join(`[${item.usage.slice(0, -3).replace(/^\((.*)\)$/, "$1")}]...`),
    usage
  )

const WIDTH = 100

// Words wrapped to the width, each line indented; lines after the first by `hanging`.
const wrap = (text: string, indent: string, hanging: string = indent): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = ""
  const current = () => lines.length === 0 ? indent : hanging
  for (const word of text.split(/\s+/).filter((word) => word !== "")) {
    if (line !== "" && current().length + line.length + 1 + word.length > WIDTH) {
      lines.push(current() + line)
      line = word
    } else {
      line = line === "" ? word : `${line} ${word}`
    }
  }
  if (line !== "") lines.push(current() + line)
  return lines
}

const exitCodes: ReadonlyArray<string> = [
  "  0  done",
  ...wrap(
    "a usage mistake: an unknown command or option; a config file, server, tool, prompt or resource that " +
      "does not exist; arguments that do not fit",
    "  2  ",
    "     "
  ),
  ...wrap(
    "any other failure: a server failed or timed out, a tool reported an error, `servers` found an enabled " +
      "server not ready (Failed, NeedsAuth, or still connecting)",
    "  1  ",
    "     "
  )
]

const heading = (title: string, color: boolean) => color ? `\x1b[1m${title}\x1b[0m` : title

const itemLines = (items: ReadonlyArray<Item>): ReadonlyArray<string> =>
  items.flatMap((item) => [`  ${item.usage}`, ...wrap(item.description, "      ")])

const page = (sections: ReadonlyArray<readonly [string, ReadonlyArray<string>]>, color: boolean): string =>
  sections
    .filter(([, lines]) => lines.length > 0)
    .map(([title, lines]) => [heading(title, color), ...lines].join("\n"))
    .join("\n\n") + "\n"

/**
 * Whether the command line asks for help: `-h` or `--help` before any `--`.
 *
 * @since 0.1.0
 */
export const requested = (args: ReadonlyArray<string>): boolean => {
  const end = args.indexOf("--")
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === "-h" || arg === "--help")
}

/**
 * Whether help should be in color: stdout is a terminal and `NO_COLOR` is not set.
 *
 * @since 0.1.0
 */
export const colored = (): boolean =>
  process.stdout.isTTY === true && (process.env.NO_COLOR === undefined || process.env.NO_COLOR === "")

/**
 * The help of `mcp-fleet` itself: what it does, its commands, and the options they all take.
 *
 * @since 0.1.0
 */
export const root = (
  self: AnyCommand,
  commands: ReadonlyArray<AnyCommand>,
  color: boolean
): string => {
  const parts = partsOf(self)
  const names = commands.map((command) => [...Command.getNames(command)][0]!)
  const width = Math.max(...names.map((name) => name.length))
  return page([
    ["mcp-fleet", wrap(parts.description, "  ")],
    ["USAGE", ["  mcp-fleet <command> [options]", "  mcp-fleet <command> --help"]],
    [
      "COMMANDS",
      commands.flatMap((command, i) => {
        return wrap(partsOf(command).description, `  ${names[i]!.padEnd(width)}  `, " ".repeat(width + 4))
      })
    ],
    ["OPTIONS (every command takes them)", itemLines([...parts.options, ...builtIns, version])],
    ["EXIT CODES", exitCodes]
  ], color)
}

/**
 * The help of one command: its usage as `mcp-fleet <command> ...`, what it does, and each of
 * its arguments and options.
 *
 * @since 0.1.0
 */
export const command = (command: AnyCommand, color: boolean): string => {
  const parts = partsOf(command)
  const usage = Usage.enumerate(Command.getUsage(command), config).flatMap((span) =>
    wrap(
      `mcp-fleet ${optionalRepeats(textOf(span), [...parts.args, ...parts.options])} [--log-level level]`,
      "  ",
      "      "
    )
  )
  return page([
    ["USAGE", usage],
    ["DESCRIPTION", wrap(parts.description, "  ")],
    ["ARGUMENTS", itemLines(parts.args)],
    ["OPTIONS", itemLines([...parts.options, ...builtIns])]
  ], color)
}

// The options that take a value, so that the word after one is not taken for the command.
const valued = new Set(["-c", "--config", "--timeout", "--root"])

// The word in the command's place: the first that is neither an option nor an option's value.
const commandWord = (args: ReadonlyArray<string>): string | undefined => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") return undefined
    if (!arg.startsWith("-")) return arg
    if (valued.has(arg)) i++
  }
  return undefined
}

// @effect/cli's sentence as plain text, in better English.
const plainText = (doc: HelpDoc.HelpDoc): string =>
  // eslint-disable-next-line no-control-regex -- the escape sequences of terminal styles
  HelpDoc.toAnsiText(doc).replace(/\x1b\[[0-9;]*m/g, "").replace(/\s+/g, " ").trim()
    .replace(/ is not a integer\b/, " is not an integer")

const didYouMean = (word: string, candidates: ReadonlyArray<string>): string => {
  const best = Catalog.suggest(word, candidates)[0]
  return best === undefined ? "" : ` (did you mean '${best}'?)`
}

/**
 * A mistake on the command line, in our words: prefixed by `mcp-fleet:` when printed, the
 * closest command or option suggested, and the help to read. @effect/cli's own sentence
 * ("Received unknown argument: '--jsno'") is kept only where we have nothing better.
 *
 * @since 0.3.0
 */
export const explain = (
  error: ValidationError.ValidationError,
  args: ReadonlyArray<string>,
  self: AnyCommand,
  commands: ReadonlyArray<AnyCommand>
): CliError.CliError => {
  const word = commandWord(args)
  const named = commands.find((candidate) => [...Command.getNames(candidate)].includes(word ?? ""))
  const text = "error" in error ? plainText(error.error) : ""
  const unknown = /^Received unknown argument: '(.*)'$/.exec(text)?.[1]
  const commandNames = commands.map((candidate) => [...Command.getNames(candidate)][0]!)
  // Every option the command takes, as its help lists them (built-ins included).
  const optionNames = () => [
    ...new Set(
      (named === undefined ? root(self, commands, false) : command(named, false)).match(/--?[a-z][a-z-]*/g) ?? []
    )
  ]
  const sentence = named === undefined && word !== undefined && error._tag === "CommandMismatch"
    ? `unknown command '${word}'${didYouMean(word, commandNames)}`
    : unknown !== undefined && optionNames().includes(unknown)
    ? `option '${unknown}' needs a value`
    : unknown?.startsWith("-") === true
    ? `unknown option '${unknown}'${named === undefined ? "" : ` for '${word}'`}${didYouMean(unknown, optionNames())}`
    : unknown !== undefined
    ? `unexpected argument '${unknown}'`
    : text !== ""
    ? text.charAt(0).toLowerCase() + text.slice(1).replace(/\.$/, "")
    : `invalid command line (${error._tag})`
  return CliError.usage(`${sentence}; see 'mcp-fleet${named === undefined ? "" : ` ${word}`} --help'`)
}
