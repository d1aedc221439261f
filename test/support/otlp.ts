// An OTLP/HTTP JSON receiver on 127.0.0.1 (a free port), in this process: what an
// OpenTelemetry collector would get. It keeps every span and metric point posted to
// /v1/traces and /v1/metrics, and lets a test wait until what it expects has arrived.
import * as http from "node:http"

/** One attribute value as OTLP JSON writes it, flattened. */
export type Value = string | number | boolean | undefined

/** A span as received, its attributes flattened. */
export interface Span {
  readonly service: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  readonly kind: number
  readonly attributes: Readonly<Record<string, Value>>
  readonly status: { readonly code?: number; readonly message?: string }
  readonly links: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
}

/** A metric data point as received, with its metric's name and unit. */
export interface Point {
  readonly service: string
  readonly name: string
  readonly unit: string
  readonly attributes: Readonly<Record<string, Value>>
  /** A histogram point's count; a sum's or gauge's value. */
  readonly value: number
}

export interface Receiver {
  /** The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string
  readonly spans: Array<Span>
  readonly points: Array<Point>
  /** Resolves once `done` holds, checked at every post; rejects after `ms`. */
  readonly until: (done: () => boolean, ms?: number) => Promise<void>
  readonly close: () => Promise<void>
}

const flatten = (attributes: ReadonlyArray<any> | undefined): Record<string, Value> => {
  const flat: Record<string, Value> = {}
  for (const { key, value } of attributes ?? []) {
    flat[key] = value.stringValue ?? value.boolValue ??
      (value.intValue === undefined ? value.doubleValue : Number(value.intValue))
  }
  return flat
}

const serviceOf = (resource: any): string => String(flatten(resource?.attributes)["service.name"])

const takeSpans = (body: any, into: Array<Span>) => {
  for (const resourceSpans of body.resourceSpans ?? []) {
    const service = serviceOf(resourceSpans.resource)
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        into.push({
          service,
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId || undefined,
          name: span.name,
          kind: span.kind,
          attributes: flatten(span.attributes),
          status: span.status ?? {},
          links: span.links ?? []
        })
      }
    }
  }
}

const takePoints = (body: any, into: Array<Point>) => {
  for (const resourceMetrics of body.resourceMetrics ?? []) {
    const service = serviceOf(resourceMetrics.resource)
    for (const scope of resourceMetrics.scopeMetrics ?? []) {
      for (const metric of scope.metrics ?? []) {
        const data = metric.histogram ?? metric.sum ?? metric.gauge
        for (const point of data?.dataPoints ?? []) {
          into.push({
            service,
            name: metric.name,
            unit: metric.unit,
            attributes: flatten(point.attributes),
            value: metric.histogram ? Number(point.count) : Number(point.asDouble ?? point.asInt)
          })
        }
      }
    }
  }
}

/** Starts a receiver; `close` stops it. */
export const receiver = (): Promise<Receiver> =>
  new Promise((resolve) => {
    const spans: Array<Span> = []
    const points: Array<Point> = []
    const waiters = new Set<() => void>()
    const server = http.createServer((request, response) => {
      let text = ""
      request.setEncoding("utf8").on("data", (chunk: string) => text += chunk).on("end", () => {
        const body = JSON.parse(text || "{}")
        if (request.url === "/v1/traces") takeSpans(body, spans)
        else if (request.url === "/v1/metrics") takePoints(body, points)
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
        for (const waiter of waiters) waiter()
      })
    })
    const until = (done: () => boolean, ms = 20_000) =>
      new Promise<void>((ok, fail) => {
        if (done()) return ok()
        const timer = setTimeout(() => {
          waiters.delete(check)
          fail(new Error(`the receiver did not get what was expected in ${ms} ms`))
        }, ms)
        const check = () => {
          if (!done()) return
          clearTimeout(timer)
          waiters.delete(check)
          ok()
        }
        waiters.add(check)
      })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { readonly port: number }
      resolve({
        url: `http://127.0.0.1:${port}`,
        spans,
        points,
        until,
        close: () =>
          new Promise((done) => {
            server.close(() => done())
            server.closeAllConnections()
          })
      })
    })
  })
