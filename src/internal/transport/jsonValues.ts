/**
 * The JSON values of an `application/json` body, as its text comes in. The spec's body is
 * one answer, but servers bend it: the conformance repo's reference server (SDK 1.29)
 * answers some 2026-07-28 requests with a notification, a newline and then the answer, and
 * holds a `subscriptions/listen` body open with one object per line. A body is therefore
 * read as a sequence of top-level values (one, newline-delimited, or back to back, pretty
 * printed or not), each handed over as soon as it is complete; whatever is not a value is
 * handed over too, at its line's end, for the caller to report.
 *
 * It only finds where values start and end (brackets outside strings); parsing them is the
 * caller's.
 *
 * @internal
 */

const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c
const NEWLINE = 0x0a

const isSpace = (code: number): boolean => code === 0x20 || code === 0x09 || code === NEWLINE || code === 0x0d

/** Splits text fed in pieces into its top-level JSON values' texts. */
export class JsonValues {
  private text = ""
  // Where the scan stands in `text`, and the state of the value it is in.
  private at = 0
  private start = -1
  private depth = 0
  private inString = false
  private escaped = false

  /** Takes the next piece of text; returns the values it completed, in order. */
  push(piece: string): Array<string> {
    this.text += piece
    const values: Array<string> = []
    const text = this.text
    for (let i = this.at; i < text.length; i++) {
      const code = text.charCodeAt(i)
      if (this.start === -1) {
        if (isSpace(code)) continue
        this.start = i
        this.depth = 0
      }
      if (this.depth === 0 && code !== OPEN_OBJECT && code !== OPEN_ARRAY) {
        // Not a value we can delimit (a bare word, a stray bracket): up to its line's end.
        if (code === NEWLINE) this.take(values, i)
        continue
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false
        else if (code === BACKSLASH) this.escaped = true
        else if (code === QUOTE) this.inString = false
      } else if (code === QUOTE) {
        this.inString = true
      } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
        this.depth++
      } else if ((code === CLOSE_OBJECT || code === CLOSE_ARRAY) && --this.depth === 0) {
        this.take(values, i + 1)
      }
    }
    // Keep only the value under way.
    if (this.start === -1) {
      this.text = ""
      this.at = 0
    } else {
      this.text = text.slice(this.start)
      this.at = this.text.length
      this.start = 0
    }
    return values
  }

  /** How much text an unfinished value holds. */
  get pending(): number {
    return this.start === -1 ? 0 : this.text.length
  }

  /** What is left once the text ended: an unfinished value or stray text, or "" for none. */
  rest(): string {
    return this.start === -1 ? "" : this.text.slice(this.start).trim()
  }

  private take(values: Array<string>, end: number): void {
    values.push(this.text.slice(this.start, end))
    this.start = -1
    this.depth = 0
    this.inString = false
    this.escaped = false
  }
}
