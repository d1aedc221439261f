// A small line chart in SVG (no chart library: a few polylines are all the page needs).
import htm from "htm"
import { h } from "preact"

const html = htm.bind(h)

const WIDTH = 240
const HEIGHT = 48

// One series: its line, and a dot at its latest value (a line of one point shows nothing).
const Line = ({ cls, name, points, x, y }) => {
  const end = points.length - 1
  const coordinates = points.map((value, index) => value === null ? null : `${x(index)},${y(value)}`)
  return html`<polyline class=${cls} fill="none" data-line=${name} points=${coordinates.filter(Boolean).join(" ")} />
    ${points[end] === null || end < 0 ? null : html`<circle class=${cls} r="2.5" cx=${x(end)} cy=${y(points[end])} />`}`
}

/** One chart: `lines` are [name, values (numbers or null), css class]; the scale is shared. */
export const Chart = ({ title, unit, lines }) => {
  const values = lines.flatMap(([, points]) => points.filter((value) => value !== null))
  const top = Math.max(...values, 0) || 1
  const length = Math.max(...lines.map(([, points]) => points.length), 2)
  const x = (index) => (index / (length - 1)) * WIDTH
  const y = (value) => HEIGHT - (value / top) * (HEIGHT - 4) - 2
  const last = lines.map(([name, points]) => {
    const value = [...points].reverse().find((each) => each !== null)
    return `${name} ${value === undefined ? "–" : format(value)}`
  })
  return html`<figure class="chart">
    <figcaption>${title} <span class="muted small">(max ${format(top)}${unit})</span></figcaption>
    <svg viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} width=${WIDTH} height=${HEIGHT} role="img" aria-label=${title}>
      ${lines.map(([name, points, cls]) => html`<${Line} name=${name} points=${points} cls=${cls} x=${x} y=${y} />`)}
    </svg>
    <div class="muted small">${last.join(" · ")}${unit}</div>
  </figure>`
}

const format = (value) => value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)
