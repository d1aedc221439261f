/**
 * The environment a stdio server starts from: by default only what a program needs to run
 * (where programs are, who and where the user is, the terminal, the locale, the temp
 * folder), so that tokens and keys in the host's environment reach no server that was not
 * given them. The server's configured `env` goes on top; `inheritEnv` passes everything.
 *
 * @internal
 */

const posix: ReadonlyArray<string> = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TMPDIR"]

// Windows' own variables: without SYSTEMROOT and its kin many programs cannot even start.
const windows: ReadonlyArray<string> = [
  "PATH",
  "PATHEXT",
  "SYSTEMROOT",
  "SYSTEMDRIVE",
  "WINDIR",
  "COMSPEC",
  "TEMP",
  "TMP",
  "USERPROFILE",
  "USERNAME",
  "USERDOMAIN",
  "HOMEDRIVE",
  "HOMEPATH",
  "APPDATA",
  "LOCALAPPDATA",
  "PROGRAMDATA",
  "PROGRAMFILES",
  "PROGRAMFILES(X86)",
  "COMMONPROGRAMFILES",
  "PROCESSOR_ARCHITECTURE",
  "NUMBER_OF_PROCESSORS",
  "OS"
]

// The names passed by default: the list, and `LC_*` on POSIX.
const isSafe = (name: string, platform: NodeJS.Platform = process.platform): boolean =>
  platform === "win32"
    // Windows' variable names are case-insensitive (`Path`).
    ? windows.includes(name.toUpperCase())
    : posix.includes(name) || name.startsWith("LC_")

/** The part of `env` a server gets by default. */
export const safe = (
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform
): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && isSafe(name, platform)) out[name] = value
  }
  return out
}
