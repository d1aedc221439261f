/**
 * Hidden text in what servers send: characters a person does not see but a model reads
 * (Unicode tag characters U+E0000–E007F, zero-width characters, bidi controls), HTML
 * comments (invisible once Markdown is rendered), ANSI escapes and other control
 * characters. `strip` removes them, `flag` makes them visible, `findHidden` names what a
 * text holds; `forTerminal` neutralises every control sequence before the CLI prints a
 * server's text (terminal injection: a server must not move the cursor, rewrite a line,
 * set the title or hide text on the user's terminal).
 *
 * @internal
 */

/** The kinds of hidden text, as people read them. */
export type Hidden =
  | "tag characters"
  | "zero-width characters"
  | "bidi controls"
  | "HTML comments"
  | "ANSI escapes"
  | "control characters"

// ESC sequences: CSI (ESC [ … final), OSC (ESC ] … BEL or ESC \), and two-character ones;
// the 8-bit CSI (U+009B) likewise.
// eslint-disable-next-line no-control-regex -- escape sequences are what is looked for
const ansi = /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[ -~]?/g
const comment = /<!--[\s\S]*?(?:-->|$)/g
const tags = /[\u{E0000}-\u{E007F}]/gu
const zeroWidth = /[\u200B-\u200D\u2060-\u2064\uFEFF\u180E\u00AD]/g
const bidi = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g
// C0 (but tab, line feed), DEL and C1; carriage return too: it rewrites a line.
// eslint-disable-next-line no-control-regex -- control characters are what is looked for
const controls = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g

const kinds: ReadonlyArray<readonly [Hidden, RegExp]> = [
  ["ANSI escapes", ansi],
  ["HTML comments", comment],
  ["tag characters", tags],
  ["zero-width characters", zeroWidth],
  ["bidi controls", bidi],
  ["control characters", controls]
]

/** What hidden text `text` holds, in a fixed order; empty for clean text. */
export const findHidden = (text: string): ReadonlyArray<Hidden> =>
  kinds.filter(([, pattern]) => new RegExp(pattern.source, pattern.flags).test(text)).map(([kind]) => kind)

/** The text without anything hidden in it. */
export const strip = (text: string): string => kinds.reduce((result, [, pattern]) => result.replace(pattern, ""), text)

const codePoint = (char: string) => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`

/**
 * The text with what is hidden made visible: a run of tag characters as the ASCII it
 * spells (`⟦hidden: "…"⟧`), every other hidden character as its code point (`⟦U+200B⟧`).
 * HTML comments are plain text already and stay.
 */
export const flag = (text: string): string =>
  text
    .replace(/[\u{E0000}-\u{E007F}]+/gu, (run) =>
      `⟦hidden: ${
        JSON.stringify(
          [...run].map((char) => String.fromCharCode(char.codePointAt(0)! - 0xE0000)).join("")
        )
      }⟧`)
    .replace(new RegExp(`${zeroWidth.source}|${bidi.source}|${controls.source}`, "g"), (char) => `⟦${codePoint(char)}⟧`)

const unsafe = new RegExp(`${controls.source}|${bidi.source}`, "g")

/**
 * JSON text made safe to print on a terminal and still the same JSON: DEL, C1 controls and
 * bidi controls (which JSON.stringify leaves as they are) as `\uXXXX` escapes.
 */
export const jsonForTerminal = (json: string): string =>
  json.replace(
    /[\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`
  )

/**
 * A server's text made safe to print on a terminal: escape sequences and control
 * characters (C0 but tab and line feed, DEL, C1) shown in caret or code-point form, and bidi
 * controls as code points, so nothing the server sent is interpreted by the terminal.
 */
export const forTerminal = (text: string): string =>
  text.replace(unsafe, (char) => {
    const code = char.charCodeAt(0)
    if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`
    return code === 0x7F ? "^?" : `<${codePoint(char)}>`
  })
