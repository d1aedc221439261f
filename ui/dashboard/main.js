// The mcp-fleet dashboard's page: Preact components written with htm (tagged templates, no
// JSX build step), fed by the dashboard's Server-Sent Events: `state` (the whole state, on
// every change) and `event` (each registry event as it happens).
import htm from "htm"
import { h, render } from "preact"
import { useEffect, useMemo, useState } from "preact/hooks"
import { Chart } from "./chart.js"
import { argumentsOf, Fields, fieldsOf, initialValues } from "./form.js"

const html = htm.bind(h)
const MAX_EVENTS = 1000

const post = (path, body) =>
  fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  }).then((response) => response.json())

const useFleet = () => {
  const [state, setState] = useState(undefined)
  const [events, setEvents] = useState([])
  const [live, setLive] = useState(false)
  useEffect(() => {
    const source = new EventSource("/api/events")
    // Each stream begins with the state and the recent events: a reconnection starts afresh.
    source.onopen = () => {
      setLive(true)
      setEvents([])
    }
    source.onerror = () => setLive(false)
    source.addEventListener("state", (message) => setState(JSON.parse(message.data)))
    source.addEventListener("event", (message) => {
      const event = JSON.parse(message.data)
      setEvents((before) => [event, ...before].slice(0, MAX_EVENTS))
    })
    return () => source.close()
  }, [])
  return { state, events, live }
}

const duration = (ms) => {
  const seconds = Math.floor(ms / 1000)
  if (seconds < 60) return `${seconds} s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`
}

const Servers = ({ servers, now }) =>
  html`<section id="servers">
    <h2>Servers</h2>
    <table>
      <thead><tr><th>server</th><th>state</th><th>revision</th><th>pid</th><th>uptime</th><th>restarts</th>
        <th>tools</th><th></th></tr></thead>
      <tbody>
        ${servers.map((server) => html`<${ServerRow} server=${server} now=${now} key=${server.name} />`)}
      </tbody>
    </table>
  </section>`

const ServerRow = ({ server, now }) =>
  html`<tr data-server=${server.name} data-state=${server.state}>
    <td><strong>${server.name}</strong><div class="muted small">${server.serverInfo ?? server.transport}</div></td>
    <td><span class=${`badge state-${server.state}`} data-testid="state">${server.state}</span>
      ${server.detail !== server.state ? html`<div class="muted small detail">${server.detail}</div>` : null}
      ${server.lastError ? html`<${LastError} error=${server.lastError} />` : null}
    </td>
    <td>${server.revision ?? "–"}</td>
    <td data-testid="pid">${server.pid ?? "–"}</td>
    <td>${server.state === "Ready" && server.since !== null ? duration(now - server.since) : "–"}</td>
    <td data-testid="restarts">${server.restarts}</td>
    <td>${server.counts.tools}</td>
    <td><button class="small" onClick=${() => post(`/api/servers/${encodeURIComponent(server.name)}/restart`, {})}>
      restart</button></td>
  </tr>`

const LastError = ({ error }) =>
  html`<details class="error">
    <summary>last error</summary>
    <div>${error.message}</div>
    ${error.stderrTail ? html`<pre class="stderr">${error.stderrTail}</pre>` : null}
  </details>`

const Asks = ({ asks }) =>
  asks.length === 0 ? null : html`<section id="asks" class="attention">
    <h2>Waiting for your approval</h2>
    ${
    asks.map((ask) =>
      html`<div class="ask" data-ask=${ask.name} key=${ask.id}>
        <p>Allow <code>${ask.name}</code> on <strong>${ask.server}</strong>?
          ${ask.rule ? html`<span class="muted small"> (rule ${ask.rule})</span>` : null}</p>
        <pre>${JSON.stringify(ask.arguments, null, 2)}</pre>
        <button class="allow" onClick=${() => post(`/api/asks/${ask.id}`, { decision: "allow" })}>Allow</button>
        <button class="deny" onClick=${() => post(`/api/asks/${ask.id}`, { decision: "deny" })}>Deny</button>
      </div>`
    )
  }
  </section>`

const diffLine = (line) => {
  const text = line.trimStart()
  return html`<div class=${text.startsWith("+ ") ? "add" : text.startsWith("- ") ? "del" : "field"}>${line}</div>`
}

const Drifted = ({ drifted }) =>
  drifted.length === 0 ? null : html`<section id="drifted" class="attention">
    <h2>Drifted tools</h2>
    ${
    drifted.map((drift) =>
      html`<div class="drift" data-drift=${drift.name} key=${drift.name}>
        <p><code>${drift.name}</code> (server <strong>${drift.server}</strong>): ${drift.summary}
          ${drift.quarantined ? html`<span class="badge state-Failed">held back</span>` : null}</p>
        <div class="diff">${drift.diff.map(diffLine)}</div>
        <button class="allow" onClick=${() => post("/api/drifted/approve", { server: drift.server, tool: drift.tool })}>
          Approve</button>
      </div>`
    )
  }
  </section>`

const Untrusted = ({ untrusted }) => {
  const [error, setError] = useState(undefined)
  return untrusted.length === 0 ? null : html`<section id="trust" class="attention">
    <h2>Project configs waiting for trust</h2>
    ${
    untrusted.map((file) =>
      html`<div class="untrusted" data-path=${file.path} key=${file.path}>
        <p><code>${file.path}</code> ${
        file.changed ? "changed since it was trusted" : "has not been trusted yet"
      }. It starts:</p>
        <pre>${file.servers.join("\n")}</pre>
        <button onClick=${() => post("/api/trust", { path: file.path }).then((answer) => setError(answer.error))}>
          Trust it</button>
      </div>`
    )
  }
    ${error ? html`<p class="error">${error}</p>` : null}
  </section>`
}

const Result = ({ outcome }) => {
  if (outcome === undefined) return null
  if (outcome.pending) return html`<p class="muted" data-testid="result">running…</p>`
  if (outcome.error !== undefined) return html`<pre class="error" data-testid="result">${outcome.error}</pre>`
  const result = outcome.result
  const texts = (result.content || []).filter((part) => part.type === "text").map((part) => part.text)
  return html`<div data-testid="result" class=${result.isError ? "error" : "ok"}>
    ${texts.length > 0 ? html`<pre>${texts.join("\n")}</pre>` : null}
    <details><summary>full result</summary><pre>${JSON.stringify(result, null, 2)}</pre></details>
  </div>`
}

const ToolForm = ({ tool }) => {
  const fields = useMemo(() => fieldsOf(tool.inputSchema), [tool.inputSchema])
  const [values, setValues] = useState(() => initialValues(fields))
  const [outcome, setOutcome] = useState(undefined)
  const run = (event) => {
    event.preventDefault()
    let args
    try {
      args = argumentsOf(fields, values)
    } catch (error) {
      return setOutcome({ error: error.message })
    }
    setOutcome({ pending: true })
    post("/api/call", { name: tool.name, arguments: args }).then(
      setOutcome,
      (error) => setOutcome({ error: String(error) })
    )
  }
  return html`<form class="tool-form" onSubmit=${run}>
    <${Fields} fields=${fields} values=${values} onChange=${setValues} />
    <button type="submit" disabled=${tool.decision === "deny"}>Run</button>
    ${tool.decision !== "allow" ? html`<span class="muted small"> policy: ${tool.decision}</span>` : null}
    <${Result} outcome=${outcome} />
  </form>`
}

const Tool = ({ tool, open, toggle }) =>
  html`<li class="tool" data-tool=${tool.name}>
    <button class="link" onClick=${toggle}><code>${tool.name}</code></button>
    <span class=${`badge decision-${tool.decision}`}>${tool.decision}</span>
    <div class="muted small">${tool.description.split("\n")[0]}</div>
    ${
    open
      ? html`<div class="tool-detail"><p class="description">${tool.description}</p><${ToolForm} tool=${tool} /></div>`
      : null
  }
  </li>`

const Catalog = ({ tools }) => {
  const [query, setQuery] = useState("")
  const [open, setOpen] = useState(undefined)
  const shown = tools.filter((tool) =>
    query === "" || `${tool.name} ${tool.description}`.toLowerCase().includes(query.toLowerCase())
  )
  return html`<section id="catalog">
    <h2>Catalog <span class="muted small">${shown.length} of ${tools.length} tools</span></h2>
    <input type="search" placeholder="Search tools" value=${query} onInput=${(event) =>
    setQuery(event.currentTarget.value)} />
    <ul class="tools">
      ${
    shown.map((tool) =>
      html`<${Tool} key=${tool.name} tool=${tool} open=${open === tool.name}
          toggle=${() => setOpen(open === tool.name ? undefined : tool.name)} />`
    )
  }
    </ul>
  </section>`
}

const Metrics = ({ metrics }) => {
  const servers = Object.keys(metrics)
  return html`<section id="metrics">
    <h2>Calls</h2>
    ${servers.length === 0 ? html`<p class="muted">No calls measured yet.</p>` : null}
    ${
    servers.map((server) => {
      const points = metrics[server]
      return html`<div class="metrics" data-metrics=${server} key=${server}>
        <h3>${server}</h3>
        <${Chart} title="calls/s" unit="" lines=${[["rate", points.map((point) => point.rate), "rate"]]} />
        <${Chart} title="errors" unit="%" lines=${[["errors", points.map((point) => point.errors * 100), "errors"]]} />
        <${Chart} title="latency" unit=" ms" lines=${[
        ["p50", points.map((point) => point.p50), "p50"],
        ["p99", points.map((point) => point.p99), "p99"]
      ]} />
      </div>`
    })
  }
  </section>`
}

const Events = ({ events }) => {
  const [query, setQuery] = useState("")
  const [type, setType] = useState("")
  const types = [...new Set(events.map((event) => event.type))].sort()
  const shown = events.filter((event) =>
    (type === "" || event.type === type) &&
    (query === "" || JSON.stringify(event).toLowerCase().includes(query.toLowerCase()))
  ).slice(0, 200)
  return html`<section id="events">
    <h2>Events</h2>
    <div class="filters">
      <input type="search" placeholder="Filter events" value=${query} onInput=${(event) =>
    setQuery(event.currentTarget.value)} />
      <select value=${type} onChange=${(event) => setType(event.currentTarget.value)} aria-label="event type">
        <option value="">all types</option>
        ${types.map((each) => html`<option value=${each}>${each}</option>`)}
      </select>
    </div>
    <ol class="events">
      ${
    shown.map((event, index) => {
      const { time, type, server, ...rest } = event
      return html`<li key=${`${time}-${index}`} data-type=${type}>
          <span class="muted">${String(time).slice(11, 23)}</span> <strong>${server}</strong> ${type}
          <span class="muted small"> ${JSON.stringify(rest)}</span>
        </li>`
    })
  }
    </ol>
  </section>`
}

const App = () => {
  const { events, live, state } = useFleet()
  if (state === undefined) return html`<p class="loading">Connecting to the fleet…</p>`
  const ready = state.servers.filter((server) => server.state === "Ready").length
  return html`<header>
      <h1>mcp-fleet</h1>
      <span class="muted">${state.servers.length} servers, ${ready} ready</span>
      <span class=${live ? "live" : "offline"} data-testid="live">${live ? "live" : "reconnecting…"}</span>
    </header>
    <main>
      <${Asks} asks=${state.asks} />
      <${Drifted} drifted=${state.drifted} />
      <${Untrusted} untrusted=${state.untrusted} />
      <${Servers} servers=${state.servers} now=${state.now} />
      <${Metrics} metrics=${state.metrics} />
      <${Catalog} tools=${state.tools} />
      <${Events} events=${events} />
    </main>`
}

render(html`<${App} />`, document.getElementById("app"))
