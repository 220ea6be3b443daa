// HTTPS for the web UIs and REST (kindling.ssl.*): what a node reads from its PEM files and refuses in one line,
// a node's port serving HTTPS, and the command-line client trusting a private CA or saying why it does not.
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { assert, describe, it } from "@effect/vitest"
import { Conf, Registry } from "@kindling/conf"
import { TlsConf } from "@kindling/kernel"
import { TrustedFetch, WebServer } from "@kindling/kernel/web"
import { Effect, Either } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { type Certificates, makeCertificates } from "../../cli/test/fixtures/certificates.js"

const registry = Registry.make(TlsConf.group)
const confOf = (values: Record<string, string>) => Either.getOrThrow(Conf.resolve(registry, [{ name: "test", values }]))

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-tls-"))
const certs: Certificates = makeCertificates(dir)

const problemOf = (result: Either.Either<unknown, { readonly message: string }>) =>
  Either.isLeft(result) ? result.left.message : assert.fail("the configuration was accepted")

describe("TlsConf", () => {
  it("is off unless enabled, and a namespace falls back to the common keys unless it has its own", () => {
    assert.isUndefined(Either.getOrThrow(TlsConf.serverTls(confOf({}), "standalone")))
    const common = confOf({
      "kindling.ssl.enabled": "true",
      "kindling.ssl.certChain": certs.cert,
      "kindling.ssl.privateKey": certs.key,
      "kindling.ssl.ui.enabled": "false"
    })
    const standalone = Either.getOrThrow(TlsConf.serverTls(common, "standalone"))
    assert.strictEqual(standalone?.certChain, Fs.readFileSync(certs.cert, "utf8"))
    assert.isDefined(Either.getOrThrow(TlsConf.serverTls(common, "historyServer")))
    assert.isUndefined(Either.getOrThrow(TlsConf.serverTls(common, "ui")))
  })

  it("reads an encrypted key with its passphrase", () => {
    const tls = Either.getOrThrow(TlsConf.serverTls(
      confOf({
        "kindling.ssl.historyServer.enabled": "true",
        "kindling.ssl.historyServer.certChain": certs.cert,
        "kindling.ssl.historyServer.privateKey": certs.encryptedKey,
        "kindling.ssl.historyServer.privateKeyPassword": certs.passphrase
      }),
      "historyServer"
    ))
    assert.strictEqual(tls?.passphrase, certs.passphrase)
  })

  it("refuses, in one line naming the key, what cannot serve", () => {
    const on = (values: Record<string, string>) =>
      problemOf(TlsConf.serverTls(confOf({ "kindling.ssl.enabled": "true", ...values }), "standalone"))
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ "kindling.ssl.privateKey": certs.key }, /kindling\.ssl\.standalone\.certChain is not set/],
      [
        { "kindling.ssl.certChain": Path.join(dir, "none.pem"), "kindling.ssl.privateKey": certs.key },
        /kindling\.ssl\.standalone\.certChain: cannot read .*none\.pem: ENOENT/
      ],
      [
        { "kindling.ssl.certChain": certs.key, "kindling.ssl.privateKey": certs.key },
        /certChain: .*server\.key holds no PEM certificate/
      ],
      [
        { "kindling.ssl.certChain": certs.cert, "kindling.ssl.privateKey": certs.cert },
        /privateKey: .*server\.pem is not a PEM private key/
      ],
      [
        { "kindling.ssl.certChain": certs.cert, "kindling.ssl.privateKey": certs.encryptedKey },
        /server\.enc\.key is not a PEM private key, or it is encrypted and has no passphrase/
      ],
      [
        {
          "kindling.ssl.certChain": certs.cert,
          "kindling.ssl.privateKey": certs.encryptedKey,
          "kindling.ssl.privateKeyPassword": "wrong"
        },
        /or its passphrase is wrong/
      ],
      [
        { "kindling.ssl.certChain": certs.cert, "kindling.ssl.privateKey": certs.selfSignedKey },
        /self\.key is not the key of the certificate in .*server\.pem/
      ]
    ]
    for (const [values, expected] of cases) {
      const problem = on(values)
      assert.match(problem, expected)
      // The problem itself is one line under the summary.
      assert.isAtMost(problem.trim().split("\n").length, 2, problem)
    }
    assert.match(
      problemOf(TlsConf.trustedCertificates(confOf({ "kindling.ssl.trustStore": certs.key }))),
      /kindling\.ssl\.trustStore: .*holds no PEM certificate/
    )
  })
})

const hello: WebServer.NodeRoutes<unknown> = {
  routes: HttpRouter.empty.pipe(HttpRouter.get("/hello", Effect.succeed(HttpServerResponse.text("hello")))),
  ready: Effect.succeed(true),
  metrics: () => ({ prefix: "kindling_tls_test_", tags: {} })
}

const serve = (tls: WebServer.Tls | undefined) =>
  Effect.gen(function*() {
    const server = yield* WebServer.bind({ name: "test UI", host: "127.0.0.1", port: 0, maxRetries: 0, tls })
    yield* server.serve(hello)
    return server
  })

const get = (url: string, trusted?: string) =>
  Effect.tryPromise({
    try: async () => {
      const answer = await TrustedFetch.make(trusted)(url, {
        method: "GET",
        headers: {},
        signal: AbortSignal.timeout(5000)
      })
      return { status: answer.status, text: await answer.text() }
    },
    catch: (error) => (error as Error).message
  })

const tlsOf = (cert: string, key: string): WebServer.Tls => ({
  certChain: Fs.readFileSync(cert, "utf8"),
  privateKey: Fs.readFileSync(key, "utf8")
})

describe("HTTPS", () => {
  it.scopedLive("a port with a certificate serves HTTPS to clients that trust its CA", () =>
    Effect.gen(function*() {
      const server = yield* serve(tlsOf(certs.cert, certs.key))
      assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/)
      const ca = Fs.readFileSync(certs.ca, "utf8")
      assert.deepStrictEqual(yield* get(`${server.url}/hello`, ca), { status: 200, text: "hello" })
      // By name as well as by address: the certificate names both.
      const byName = server.url.replace("127.0.0.1", "localhost")
      assert.deepStrictEqual(yield* get(`${byName}/hello`, ca), { status: 200, text: "hello" })
    }))

  it.scopedLive("a client that does not trust the certificate says so in one line and names the setting", () =>
    Effect.gen(function*() {
      const server = yield* serve(tlsOf(certs.selfSignedCert, certs.selfSignedKey))
      const refused = yield* Effect.flip(get(`${server.url}/hello`))
      assert.match(
        refused,
        /^the certificate of 127\.0\.0\.1:\d+ is not trusted \(.*\): give its CA certificate in kindling\.ssl\.trustStore$/
      )
      // Trusting that certificate itself is enough.
      const trusted = yield* get(`${server.url}/hello`, Fs.readFileSync(certs.selfSignedCert, "utf8"))
      assert.strictEqual(trusted.status, 200)
    }))

  it.scopedLive("https:// to a plain HTTP port is a one-line error too", () =>
    Effect.gen(function*() {
      const server = yield* serve(undefined)
      const refused = yield* Effect.flip(get(`${server.url.replace("http:", "https:")}/hello`))
      assert.match(refused, /does not speak TLS as expected .*: is it an http:\/\/ port\?$/)
      assert.notInclude(refused, "\n")
    }))
})
