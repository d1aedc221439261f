// Reading the CLI's help pages in tests.

/** The option and argument lines of a help page without our description on the line under them. */
export const undescribed = (help: string) =>
  help.split("\n").filter((line, i, lines) => /^ {2}[-(<[]/.test(line) && !/^ {6}\S/.test(lines[i + 1] ?? ""))
