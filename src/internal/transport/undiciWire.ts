/**
 * The wire on an undici Dispatcher: each exchange is one `dispatch` whose handler is the
 * transport's own callbacks, with no promise, stream or AbortController in between.
 *
 * @internal
 */
import type { Dispatcher } from "undici"
import type { Wire } from "./httpWire.js"

const ABORTED = new Error("the exchange was abandoned")

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
    let controller: Dispatcher.DispatchController | undefined
    let done = false
    dispatcher.dispatch({
      origin,
      path,
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
      // Deadlines are the transport's (Clock-based); a stream may stay open for hours.
      headersTimeout: 0,
      bodyTimeout: 0
    }, {
      onRequestStart: (started) => {
        controller = started
        if (done) started.abort(ABORTED)
      },
      onResponseStart: (_, status, headers) => {
        if (!done && status >= 200) handler.onHeaders(status, headers)
      },
      onResponseData: (_, chunk) => {
        if (!done) handler.onData(chunk)
      },
      onResponseEnd: () => {
        if (done) return
        done = true
        handler.onEnd()
      },
      onResponseError: (_, error) => {
        if (done) return
        done = true
        handler.onError(error)
      }
    })
    return () => {
      if (done) return
      done = true
      controller?.abort(ABORTED)
    }
  }
}
