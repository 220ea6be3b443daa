// HTTPS for the web UIs and the REST port (kindling.ssl.*) on real nodes: the master's and workers' UIs and the
// REST port serve HTTPS, `kindling submit` over REST trusts the cluster's CA when told to and says in one line why it
// does not otherwise, an app's UI serves HTTPS, and a node given a key that is not its certificate's does not start.
import { assert, describe, it } from "@effect/vitest"
import { TrustedFetch } from "@kindling/kernel/web"
import { Deadlines } from "@kindling/protocol/testing"
import { Effect } from "effect"
import * as Fs from "node:fs"
import { makeCertificates } from "./fixtures/certificates.js"
import { app, cluster, masterState, run, start, temporaryDirectory } from "./fixtures/cluster.js"

const rest = ["--conf", "kindling.master.rest.enabled=true", "--conf", "kindling.master.rest.port=0"]

// The flags of HTTPS with a certificate and key, for every server or for one kind (`namespace`).
const https = (cert: string, key: string, namespace?: string, passphrase?: string) => {
  const prefix = namespace === undefined ? "kindling.ssl" : `kindling.ssl.${namespace}`
  const values = [`enabled=true`, `certChain=${cert}`, `privateKey=${key}`]
  if (passphrase !== undefined) values.push(`privateKeyPassword=${passphrase}`)
  return values.flatMap((value) => ["--conf", `${prefix}.${value}`])
}

// An app that runs a job, then waits to be stopped: its UI stays up.
const waits = `import { App, Kindling } from "@kindling/app"
import { Effect } from "effect"
export default App.make(() => Effect.gen(function*() {
  const kc = yield* Kindling
  yield* kc.range(0, 10).count()
  yield* Effect.sleep("60 seconds")
}))
`

const get = (url: string, ca: string) =>
  Effect.promise(async () => {
    const answer = await TrustedFetch.make(Fs.readFileSync(ca, "utf8"))(url, {
      method: "GET",
      headers: {},
      signal: AbortSignal.timeout(5000)
    })
    return { status: answer.status, text: await answer.text() }
  })

describe("HTTPS for the web UIs and REST", () => {
  it.scopedLive(
    "the master's and workers' UIs and the REST port serve HTTPS; submit trusts the cluster's CA",
    () =>
      Effect.gen(function*() {
        const certs = makeCertificates(yield* temporaryDirectory)
        const tls = https(certs.cert, certs.key)
        const { master } = yield* cluster(1, [...rest, ...tls], tls)
        const [, ui] = yield* master.node.waitFor(/UI at (https:\/\/127\.0\.0\.1:\d+)/)
        const [, restUrl] = yield* master.node.waitFor(/Started REST server for submitting applications at (\S+)/)
        assert.match(restUrl!, /^https:\/\//)
        assert.deepStrictEqual(yield* get(`${ui}/healthz`, certs.ca), { status: 200, text: "ok" })
        const [worker] = (yield* masterState(master.url)).workers
        assert.match(worker!.webUiAddress, /^https:\/\/127\.0\.0\.1:\d+$/)
        assert.strictEqual((yield* get(`${worker!.webUiAddress}/healthz`, certs.ca)).status, 200)

        const trusting = ["--conf", `kindling.ssl.trustStore=${certs.ca}`]
        const submitted = yield* run(["submit", "--master", restUrl!, ...trusting, "--wait", "examples/pi.ts", "4"])
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        assert.match(submitted.stdout, / FINISHED\n$/)

        const untrusting = yield* run(["submit", "--master", restUrl!, "--status", "driver-none"])
        assert.notStrictEqual(untrusting.code, 0)
        const [line, ...more] = untrusting.stderr.trim().split("\n").filter((text) => text.startsWith("kindling:"))
        assert.match(line!, /the certificate of 127\.0\.0\.1:\d+ is not trusted .*kindling\.ssl\.trustStore$/)
        assert.deepStrictEqual(more, [])
      }),
    Deadlines.scaled(90_000)
  )

  // Starts `kindling <args>`, which logs its server's URL as `pattern` says: that server answers over HTTPS.
  const answersOverHttps = (args: ReadonlyArray<string>, pattern: RegExp, ca: string) =>
    Effect.gen(function*() {
      const [, url] = yield* (yield* start(args)).waitFor(pattern)
      assert.match(url!, /^https:\/\//)
      assert.strictEqual((yield* get(`${url}/healthz`, ca)).status, 200)
    })

  it.scopedLive("an app's UI serves HTTPS with kindling.ssl.ui.*", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const certs = makeCertificates(dir)
      yield* answersOverHttps(
        [
          "submit",
          "--master",
          "local[1]",
          "--conf",
          "kindling.ui.port=0",
          ...https(certs.cert, certs.encryptedKey, "ui", certs.passphrase),
          app(dir, "waits.ts", waits)
        ],
        /The app UI is at (\S+)/,
        certs.ca
      )
    }), Deadlines.scaled(60_000))

  it.scopedLive("the history server serves HTTPS with kindling.ssl.historyServer.*", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const certs = makeCertificates(dir)
      const history = [
        "history",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        ...https(certs.cert, certs.key, "historyServer")
      ]
      yield* answersOverHttps([...history, dir], /The history server is at (\S+)/, certs.ca)
    }), Deadlines.scaled(30_000))

  it.live(
    "a node given a key that is not its certificate's does not start, and says why in one line",
    () =>
      Effect.gen(function*() {
        const certs = makeCertificates(yield* temporaryDirectory)
        const refused = yield* run([
          "master",
          "--host",
          "127.0.0.1",
          "--port",
          "0",
          ...https(certs.cert, certs.selfSignedKey)
        ])
        assert.notStrictEqual(refused.code, 0)
        assert.match(
          refused.stderr,
          /kindling\.ssl\.standalone\.privateKey: .*self\.key is not the key of the certificate/
        )
      }).pipe(Effect.scoped),
    Deadlines.scaled(30_000)
  )
})
