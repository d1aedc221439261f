/**
 * The wire on an undici Dispatcher: each exchange is one `dispatch` whose handler calls the
 * transport's own, with no promise, stream or AbortController in between. Handlers are class
 * instances: an exchange allocates no closures.
 *
 * @internal
 */
import type { Dispatcher } from "undici"
import type { Abortable, Wire, WireHandler } from "../../HttpWire.js"

const ABORTED = new Error("the exchange was abandoned")

class Exchange implements Dispatcher.DispatchHandler, Abortable {
  private controller: Dispatcher.DispatchController | undefined
  private done = false

  constructor(private readonly handler: WireHandler) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller
    if (this.done) controller.abort(ABORTED)
  }

  onResponseStart(
    _: Dispatcher.DispatchController,
    status: number,
    headers: Record<string, string | Array<string> | undefined>
  ): void {
    if (!this.done && status >= 200) this.handler.onHeaders(status, headers)
  }

  onResponseData(_: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.done) this.handler.onData(chunk)
  }

  onResponseEnd(): void {
    if (this.done) return
    this.done = true
    this.handler.onEnd()
  }

  onResponseError(_: Dispatcher.DispatchController, error: Error): void {
    if (this.done) return
    this.done = true
    this.handler.onError(error)
  }

  abort(): void {
    if (this.done) return
    this.done = true
    this.controller?.abort(ABORTED)
  }
}

/** A wire sending through `dispatcher`. */
export const fromDispatcher = (dispatcher: Dispatcher): Wire => {
  // Transports send to one URL again and again: split it once.
  let lastUrl = ""
  let origin = ""
  let path = ""
  return (request, handler) => {
    if (request.url !== lastUrl) {
      const parsed = new URL(request.url)
      lastUrl = request.url
      origin = parsed.origin
      path = parsed.pathname + parsed.search
    }
    const exchange = new Exchange(handler)
    dispatcher.dispatch({
      origin,
      path,
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
      // Deadlines are the transport's (Clock-based); a stream may stay open for hours.
      headersTimeout: 0,
      bodyTimeout: 0
    }, exchange)
    return exchange
  }
}
