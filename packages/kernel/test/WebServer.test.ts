// A node's HTTP port over real HTTP on 127.0.0.1: the next free port when the one asked for is taken, the common
// routes, a route that fails answering 500 while the server goes on, and the markup helpers' escaping.
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { assert, describe, it } from "@effect/vitest"
import { Html, WebServer } from "@kindling/kernel/web"
import { Effect, Logger, Metric, Stream } from "effect"
import * as Net from "node:net"

const get = (url: string, init?: RequestInit) =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    return { status: response.status, text: await response.text(), type: response.headers.get("content-type") }
  })

// A port held by another listener for the scope's life.
const taken = Effect.acquireRelease(
  Effect.async<Net.Server>((resume) => {
    const server = Net.createServer()
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
).pipe(Effect.map((server) => (server.address() as Net.AddressInfo).port))

const visits = Metric.counter("kindling_test_visits", { incremental: true })

const routes: WebServer.NodeRoutes<unknown> = {
  routes: HttpRouter.empty.pipe(
    HttpRouter.get("/hello", Effect.succeed(HttpServerResponse.text("hello"))),
    HttpRouter.get("/broken", Effect.die(new Error("the page has a bug")))
  ),
  ready: Effect.succeed(false),
  metrics: () => ({ prefix: "kindling_test_", tags: { node: "a" } }),
  beforeScrape: Metric.increment(Metric.tagged(visits, "node", "a"))
}

describe("WebServer", () => {
  it.scopedLive("takes the next port when the one asked for is taken, and says which it took", () =>
    Effect.gen(function*() {
      const port = yield* taken
      const warnings: Array<string> = []
      const capture = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ logLevel, message }) => {
          if (logLevel._tag === "Warning") warnings.push(Array.isArray(message) ? message.join(" ") : String(message))
        })
      )
      const server = yield* WebServer.bind({ name: "test UI", host: "127.0.0.1", port, maxRetries: 16 }).pipe(
        Effect.provide(capture)
      )
      assert.notStrictEqual(server.port, port)
      assert.isTrue(server.port > port && server.port <= port + 16)
      assert.strictEqual(server.url, `http://127.0.0.1:${server.port}`)
      // Loudly: whoever looks for it at the port asked for finds another server.
      assert.lengthOf(warnings, 1)
      assert.include(
        warnings[0],
        `The test UI is at ${server.url} (not at its port ${port}, which another server holds`
      )
    }))

  it.scopedLive("fails with a typed error when no port is free within the retries", () =>
    Effect.gen(function*() {
      const port = yield* taken
      const error = yield* Effect.flip(WebServer.bind({ name: "test UI", host: "127.0.0.1", port, maxRetries: 0 }))
      assert.strictEqual(error._tag, "WebPortUnavailable")
      assert.include(error.message, `The test UI could not listen on 127.0.0.1, port ${port}`)
    }))

  it.scopedLive("serves the node's routes and the common ones; a failing route answers 500 and the server goes on", () =>
    Effect.gen(function*() {
      const server = yield* WebServer.bind({ name: "test UI", host: "127.0.0.1", port: 0, maxRetries: 0 })
      yield* server.serve(routes)
      assert.strictEqual((yield* get(`${server.url}/hello`)).text, "hello")
      assert.strictEqual((yield* get(`${server.url}/healthz`)).text, "ok")
      assert.strictEqual((yield* get(`${server.url}/readyz`)).status, 503)
      const broken = yield* get(`${server.url}/broken`)
      assert.strictEqual(broken.status, 500)
      assert.include(broken.text, "the page has a bug")
      assert.strictEqual((yield* get(`${server.url}/nothing-here`)).status, 404)
      assert.strictEqual((yield* get(`${server.url}/hello`)).status, 200)
      assert.include((yield* get(`${server.url}/static/kindling.css`)).type, "text/css")
      const scrape = yield* get(`${server.url}/metrics/prometheus`)
      assert.include(scrape.text, "kindling_test_visits_total{node=\"a\"} 1")
      assert.notInclude(scrape.text, "effect_fiber")
    }))

  it.live("stops at once when its scope closes, even with a response streaming to a client", () =>
    Effect.gen(function*() {
      const stopped = yield* Effect.scoped(Effect.gen(function*() {
        const server = yield* WebServer.bind({ name: "test UI", host: "127.0.0.1", port: 0, maxRetries: 0 })
        yield* server.serve({
          ...routes,
          routes: HttpRouter.get(
            "/forever",
            Effect.succeed(
              HttpServerResponse.stream(Stream.tick("50 millis").pipe(Stream.as(": tick\n\n"), Stream.encodeText))
            )
          )(HttpRouter.empty)
        })
        yield* Effect.promise(() => fetch(`${server.url}/forever`).then(() => undefined))
        return Date.now()
      }))
      assert.isBelow(Date.now() - stopped, 1000)
    }).pipe(Effect.timeout("5 seconds")))
})

describe("Html", () => {
  it("escapes what is interpolated, keeps markup, flattens lists", () => {
    const name = "<script>alert('x')</script> & \"friends\""
    const markup = Html.html`<p title="${name}">${name}${[Html.html`<b>${1}</b>`, " ", 2]}</p>`
    assert.strictEqual(
      markup.text,
      "<p title=\"&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;friends&quot;\">" +
        "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;friends&quot;<b>1</b> 2</p>"
    )
  })

  it("formats sizes and durations as Spark's pages do", () => {
    assert.strictEqual(Html.bytes(512), "512 B")
    assert.strictEqual(Html.bytes(1536), "1.5 KiB")
    assert.strictEqual(Html.megabytes(2048), "2.0 GiB")
    assert.strictEqual(Html.duration(42), "42 ms")
    assert.strictEqual(Html.duration(3_400), "3.4 s")
    assert.strictEqual(Html.duration(90_000), "1.5 min")
  })

  it("accepts a kill only from the node's own pages", () => {
    assert.isTrue(WebServer.isSameOrigin({ host: "m:8080", origin: "http://m:8080" }))
    assert.isTrue(WebServer.isSameOrigin({ host: "m:8080", referer: "http://m:8080/app/?appId=a" }))
    assert.isFalse(WebServer.isSameOrigin({ host: "m:8080", origin: "http://evil.example" }))
    assert.isFalse(WebServer.isSameOrigin({ host: "m:8080" }))
    assert.isFalse(WebServer.isSameOrigin({ host: "m:8080", origin: "null" }))
  })
})
