/**
 * The page's HTML: a shell that loads the bundled front end (`app.js`, `app.css`) from the
 * dashboard itself, so it works offline; the Content-Security-Policy lets it load nothing
 * from anywhere else.
 *
 * @internal
 */

/** The built front end: its script and its style sheet. */
export interface Assets {
  readonly script: string
  readonly style: string
}

export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

export const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcp-fleet dashboard</title>
<link rel="stylesheet" href="/app.css">
</head>
<body>
<div id="app"><p class="loading">Loading the fleet…</p></div>
<script type="module" src="/app.js"></script>
</body>
</html>
`
