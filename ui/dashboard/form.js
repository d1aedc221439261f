// A form made from a tool's inputSchema: one field per top-level property (a text box, a
// number, a checkbox, a choice for an enum, JSON for anything else), and the arguments it
// gives, typed as the schema says. Empty optional fields are left out.
import htm from "htm"
import { h } from "preact"

const html = htm.bind(h)

const kindOf = (schema) => {
  const type = Array.isArray(schema.type) ? schema.type.find((each) => each !== "null") : schema.type
  if (Array.isArray(schema.enum)) return "enum"
  if (type === "string" || type === "number" || type === "integer" || type === "boolean") return type
  return "json"
}

/** The top-level properties of a schema: name, its schema, whether required, its kind. */
export const fieldsOf = (inputSchema) => {
  const properties = (inputSchema && inputSchema.properties) || {}
  const required = new Set((inputSchema && inputSchema.required) || [])
  return Object.entries(properties).map(([name, schema]) => ({
    name,
    schema: schema || {},
    required: required.has(name),
    kind: kindOf(schema || {})
  }))
}

/** The initial values of a form: each field's default, if any. */
export const initialValues = (fields) =>
  Object.fromEntries(fields.map((field) => {
    const given = field.schema.default
    if (given === undefined) return [field.name, field.kind === "boolean" ? false : ""]
    return [field.name, field.kind === "json" ? JSON.stringify(given) : given]
  }))

/** The arguments of the values: typed, empty optional fields left out; throws on bad JSON. */
export const argumentsOf = (fields, values) => {
  const args = {}
  for (const field of fields) {
    const value = values[field.name]
    if (field.kind === "boolean") {
      if (value || field.required) args[field.name] = Boolean(value)
      continue
    }
    if (value === "" || value === undefined) {
      if (field.required && field.kind === "string") args[field.name] = ""
      continue
    }
    if (field.kind === "number" || field.kind === "integer") args[field.name] = Number(value)
    else if (field.kind === "json") {
      try {
        args[field.name] = JSON.parse(value)
      } catch {
        throw new Error(`${field.name}: not valid JSON`)
      }
    } else if (field.kind === "enum") {
      const choice = field.schema.enum.find((option) => String(option) === String(value))
      args[field.name] = choice === undefined ? value : choice
    } else args[field.name] = value
  }
  return args
}

const input = (field, value, set) => {
  const id = `field-${field.name}`
  switch (field.kind) {
    case "boolean":
      return html`<input id=${id} name=${field.name} type="checkbox" checked=${Boolean(value)}
        onChange=${(event) => set(event.currentTarget.checked)} />`
    case "number":
    case "integer":
      return html`<input id=${id} name=${field.name} type="number" step=${field.kind === "integer" ? "1" : "any"}
        value=${value} onInput=${(event) => set(event.currentTarget.value)} />`
    case "enum":
      return html`<select id=${id} name=${field.name} value=${value} onChange=${(event) =>
        set(event.currentTarget.value)}>
        ${field.required ? null : html`<option value="">—</option>`}
        ${field.schema.enum.map((option) => html`<option value=${String(option)}>${String(option)}</option>`)}
      </select>`
    case "json":
      return html`<textarea id=${id} name=${field.name} rows="3" placeholder="JSON" value=${value}
        onInput=${(event) => set(event.currentTarget.value)}></textarea>`
    default:
      return html`<input id=${id} name=${field.name} type="text" value=${value}
        onInput=${(event) => set(event.currentTarget.value)} />`
  }
}

/** The fields of a form, each with its label, type and description. */
export const Fields = ({ fields, values, onChange }) =>
  fields.length === 0
    ? html`<p class="muted">This tool takes no arguments.</p>`
    : fields.map((field) =>
      html`<div class="field">
        <label for=${`field-${field.name}`}>
          <code>${field.name}</code>${field.required ? html`<span class="required" title="required">*</span>` : null}
          <span class="muted"> ${field.kind === "json" ? (field.schema.type || "any") : field.kind}</span>
        </label>
        ${input(field, values[field.name], (value) => onChange({ ...values, [field.name]: value }))}
        ${field.schema.description ? html`<div class="muted small">${field.schema.description}</div>` : null}
      </div>`
    )
