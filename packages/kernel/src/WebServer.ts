/**
 * The HTTP port of a node (its web UI, JSON and metrics; HTTPS with `kindling.ssl.*`), started by the node like
 * its RPC port: bound first, so the node can tell others its address, and serving the node's routes once the node
 * is up. Every node answers
 * the same few routes besides its own: `/healthz`, `/readyz`, `/metrics/prometheus` and the shared assets under
 * `/static/`.
 *
 * @since 0.1.0
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import type * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import * as Https from "node:https"
import * as NodeMetrics from "./NodeMetrics.js"
import * as WebAssets from "./WebAssets.js"

/**
 * No port could be bound: `port` and the `tries - 1` after it were all taken (or the host is not this machine's).
 *
 * @since 0.1.0
 * @category errors
 */
export class WebPortUnavailable extends Data.TaggedError("WebPortUnavailable")<{
  readonly server: string
  readonly host: string
  readonly port: number
  readonly tries: number
  readonly reason: string
}> {
  override get message() {
    const ports = this.tries > 1 ? `ports ${this.port}–${this.port + this.tries - 1}` : `port ${this.port}`
    return `The ${this.server} could not listen on ${this.host}, ${ports}: ${this.reason}`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** What the port serves, for messages: "master UI", "app UI". */
  readonly name: string
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
  /** When `port` is taken, the next ports tried (`kindling.port.maxRetries`, 16 as Spark's). */
  readonly maxRetries: number
  /** Serve HTTPS with this certificate (`kindling.ssl.*`, read by `TlsConf.serverTls`) rather than HTTP. */
  readonly tls?: Tls | undefined
}

/**
 * What a server proves itself with: its certificate chain and private key, PEM, and the key's passphrase if it
 * has one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tls {
  readonly certChain: string
  readonly privateKey: string
  readonly passphrase?: string | undefined
}

/**
 * What a node adds to the common routes.
 *
 * @since 0.1.0
 * @category models
 */
export interface NodeRoutes<E> {
  readonly routes: HttpRouter.HttpRouter<E, never>
  /** Whether the node is ready for work (`/readyz` answers 200, or 503). */
  readonly ready: Effect.Effect<boolean>
  /** Its metrics, for `/metrics/prometheus` (asked at each scrape: a node may learn its id late). */
  readonly metrics: () => NodeMetrics.Selection
  /** Where else its metrics are served (Spark's PrometheusServlet paths: `/metrics/master/prometheus`, …). */
  readonly metricsPaths?: ReadonlyArray<HttpRouter.PathInput>
  /** Records the figures read off the node's state, before a scrape renders them. */
  readonly beforeScrape?: Effect.Effect<void>
}

/**
 * A bound port.
 *
 * @since 0.1.0
 * @category models
 */
export interface WebServer {
  readonly port: number
  /** `http://host:port`, or `https://host:port` with TLS. */
  readonly url: string
  /** Serves the node's routes (and the common ones) until the scope closes. */
  readonly serve: <E>(node: NodeRoutes<E>) => Effect.Effect<void, never, Scope.Scope>
  /**
   * Serves `app` alone until the scope closes: for a port that speaks a protocol of its own, where the common
   * routes would answer paths that protocol defines (the master's REST port).
   */
  readonly serveApp: <E>(app: HttpApp.Default<E>) => Effect.Effect<void, never, Scope.Scope>
}

const listen = (host: string, port: number, tls: Tls | undefined) =>
  Effect.gen(function*() {
    const nodeServer: Http.Server = tls === undefined
      ? Http.createServer()
      : Https.createServer({ cert: tls.certChain, key: tls.privateKey, passphrase: tls.passphrase })
    const server = yield* NodeHttpServer.make(() => nodeServer, { host, port }).pipe(
      Effect.mapError((error) => (error.cause instanceof Error ? error.cause.message : String(error.cause)))
    )
    // Runs before the server's own release, which would wait for every connection to end: a page's events
    // stream never does, and a node must stop when told however many browsers watch it.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        nodeServer.close()
        nodeServer.closeAllConnections()
      })
    )
    return server
  })

const tryPorts = (
  options: Options,
  attempt: number
): Effect.Effect<HttpServer.HttpServer, WebPortUnavailable, Scope.Scope> =>
  listen(options.host, options.port === 0 ? 0 : options.port + attempt, options.tls).pipe(
    Effect.catchAll((reason) =>
      options.port !== 0 && attempt < options.maxRetries && reason.includes("EADDRINUSE")
        ? tryPorts(options, attempt + 1)
        : Effect.fail(
          new WebPortUnavailable({
            server: options.name,
            host: options.host,
            port: options.port,
            tries: attempt + 1,
            reason
          })
        )
    )
  )

const common = <E>(node: NodeRoutes<E>) => {
  const scrape = Effect.zipRight(
    node.beforeScrape ?? Effect.void,
    Effect.map(
      Effect.suspend(() => NodeMetrics.prometheusText(node.metrics())),
      (text) => HttpServerResponse.text(text, { contentType: "text/plain; version=0.0.4; charset=utf-8" })
    )
  )
  const withMetrics = ["/metrics/prometheus" as const, ...(node.metricsPaths ?? [])].reduce(
    (routes: HttpRouter.HttpRouter<E, never>, path) => HttpRouter.get(routes, path, scrape),
    node.routes
  )
  return withMetrics.pipe(
    HttpRouter.get("/healthz", HttpServerResponse.text("ok")),
    HttpRouter.get(
      "/readyz",
      Effect.map(
        node.ready,
        (ready) => ready ? HttpServerResponse.text("ready") : HttpServerResponse.text("not ready", { status: 503 })
      )
    ),
    HttpRouter.get(
      "/static/kindling.css",
      HttpServerResponse.text(WebAssets.stylesheet, { contentType: "text/css; charset=utf-8" })
    ),
    HttpRouter.get(
      "/static/kindling.js",
      HttpServerResponse.text(WebAssets.script, { contentType: "text/javascript; charset=utf-8" })
    )
  )
}

// A route that fails answers 500 with the reason, on one line; the node goes on.
const failure = (error: unknown) =>
  HttpServerResponse.text(
    `Internal error: ${error instanceof Error ? error.message : String(error)}`,
    { status: 500 }
  )

/**
 * Binds the port (or the next free one, as Spark's UIs do); it is released when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const bind = (options: Options): Effect.Effect<WebServer, WebPortUnavailable, Scope.Scope> =>
  Effect.gen(function*() {
    const server = yield* tryPorts(options, 0)
    const port = server.address._tag === "TcpAddress" ? server.address.port : options.port
    const scheme = options.tls === undefined ? "http" : "https"
    const url = `${scheme}://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}`
    // On another port than the one asked for, it says so loudly: whoever looks for it there finds another server.
    if (options.port !== 0 && port !== options.port) {
      yield* Effect.logWarning(
        `The ${options.name} is at ${url} (not at its port ${options.port}, which another server holds and ` +
          "answers on; the next free one was bound, kindling.port.maxRetries)"
      )
    } else {
      yield* Effect.logInfo(`The ${options.name} is at ${url}`)
    }
    const guarded = <E>(app: HttpApp.Default<E>) =>
      app.pipe(
        Effect.catchAllCause((cause) =>
          cause._tag === "Fail" && (cause.error as { _tag?: string } | undefined)?._tag === "RouteNotFound"
            ? Effect.succeed(HttpServerResponse.text("Not found", { status: 404 }))
            : Effect.succeed(failure(cause._tag === "Fail" ? cause.error : cause._tag === "Die" ? cause.defect : cause))
        )
      )
    return {
      port,
      url,
      serve: (node) => server.serve(guarded(common(node))),
      serveApp: (app) => server.serve(guarded(app))
    }
  })

const KillForm = Schema.Struct({ id: Schema.String, terminate: Schema.optional(Schema.String) })

/**
 * What a kill button posts to (Spark's form: `id` and `terminate=true`): refused with 405 when kills are off and
 * 403 unless the request comes from the node's own pages (`isSameOrigin`), 400 without an `id`; otherwise `kill`
 * runs and the browser goes back to `redirectTo`.
 *
 * @since 0.1.0
 */
export const killHandler = (options: {
  readonly enabled: boolean
  readonly redirectTo: string
  readonly kill: (id: string) => Effect.Effect<void>
}) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!options.enabled) {
      return HttpServerResponse.text("Killing is disabled (kindling.ui.killEnabled)", { status: 405 })
    }
    if (!isSameOrigin(request.headers)) {
      return HttpServerResponse.text("Refused: the request does not come from this UI's pages", { status: 403 })
    }
    const form = yield* Effect.either(HttpServerRequest.schemaBodyUrlParams(KillForm))
    if (form._tag === "Left") return HttpServerResponse.text("Give the id of what to kill", { status: 400 })
    if (form.right.terminate === "true") yield* options.kill(form.right.id)
    return HttpServerResponse.redirect(options.redirectTo, { status: 303 })
  })

/**
 * Whether a request that changes something (a kill button's POST) comes from one of the node's own pages: its
 * `Origin` (or, without one, its `Referer`) is the address the request was sent to. A page elsewhere cannot
 * make a browser send it.
 *
 * @since 0.1.0
 */
export const isSameOrigin = (headers: Readonly<Record<string, string | undefined>>): boolean => {
  const host = headers["host"]
  if (host === undefined) return false
  const from = headers["origin"] ?? headers["referer"]
  if (from === undefined) return false
  try {
    return new URL(from).host === host
  } catch {
    return false
  }
}
