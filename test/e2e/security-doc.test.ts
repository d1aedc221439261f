// SECURITY.md names, for each threat, the tests that show the defence: every test file it
// names exists, and every test title it quotes (`file` ("title…")) is in that file, so the
// document cannot point at tests that were renamed or never written.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../..", import.meta.url))
const doc = fs.readFileSync(path.join(root, "SECURITY.md"), "utf8")

// Each named test file, with the titles quoted right after it.
const named = [...doc.matchAll(/`((?:test\/)?[\w./-]+\.test\.ts)`(?: \(((?:"[^"]*"(?:, )?)+)\))?/g)].map((
  [, file, quoted]
) => ({
  file: path.join(root, file!.startsWith("test/") ? file! : `test/${file}`),
  titles: [...(quoted ?? "").matchAll(/"([^"]*)"/g)].map(([, title]) => title!.replace(/^…|…$/g, ""))
}))

describe("SECURITY.md", () => {
  it("names test files that exist, and test titles that are in them", () => {
    expect(named.length).toBeGreaterThan(30)
    expect(named.filter(({ file }) => !fs.existsSync(file)).map(({ file }) => path.relative(root, file))).toEqual([])
    const missing = named.flatMap(({ file, titles }) => {
      const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
      return titles.filter((title) => !text.includes(title)).map((title) => `${path.relative(root, file)}: ${title}`)
    })
    expect(missing).toEqual([])
  })

  it("marks no test as expected: every one it names is written", () => {
    expect(doc).not.toMatch(/\*`[^`]*\.test\.ts`\*/)
  })
})
