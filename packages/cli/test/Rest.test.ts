// The master's REST submission server, against real masters and workers over HTTP on 127.0.0.1: Spark's paths,
// status codes, messages and error texts; drivers submitted, followed and killed over REST; bearer tokens; and
// `kindling submit` over REST, with --status and --kill over both transports.
import { assert, describe, it } from "@effect/vitest"
import { RestAuth, RestMessages } from "@kindling/protocol"
import { Deadlines, Polling } from "@kindling/protocol/testing"
import { Arbitrary, Effect, FastCheck as fc, Schema } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import {
  app,
  cluster,
  forever,
  isRunning,
  masterState,
  pidsIn,
  plaintextOnly,
  root,
  run,
  start,
  startMaster,
  temporaryDirectory
} from "./fixtures/cluster.js"

const version = "0.1.0"
const rest = ["--conf", "kindling.master.rest.enabled=true", "--conf", "kindling.master.rest.port=0"]

const restUrlOf = (node: { readonly waitFor: (pattern: RegExp) => Effect.Effect<RegExpExecArray> }) =>
  node.waitFor(/Started REST server for submitting applications at (http:\/\/\S+)/).pipe(
    Effect.map(([, url]) => url!)
  )

/** A master with its REST server on a free port. */
const restMaster = (extra: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const master = yield* startMaster([...rest, ...extra])
    return { ...master, rest: yield* restUrlOf(master.node) }
  })

/** A master with its REST server and `workers` workers. */
const restCluster = (workers: number, extra: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const started = yield* cluster(workers, [...rest, ...extra])
    return { ...started, rest: yield* restUrlOf(started.master.node) }
  })

interface Reply {
  readonly status: number
  readonly text: string
  readonly headers: Headers
}

const call = (url: string, init: RequestInit = {}) =>
  Effect.promise(() =>
    fetch(url, init).then(async (response): Promise<Reply> => ({
      status: response.status,
      text: await response.text(),
      headers: response.headers
    }))
  )

const post = (url: string, body?: string, headers: Record<string, string> = {}) =>
  call(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body })
  })

/** The message of a reply, checked to be written as Spark's server writes it (sorted keys, pretty-printed). */
const messageOf = (reply: Reply) => {
  const parsed = RestMessages.parse(reply.text)
  assert.strictEqual(parsed._tag, "Right", reply.text)
  const { message } = (parsed as { right: { message: RestMessages.RestMessage } }).right
  assert.strictEqual(RestMessages.toJson(message), reply.text)
  assert.strictEqual(reply.headers.get("content-type"), "application/json;charset=utf-8")
  return Schema.encodeSync(RestMessages.RestMessage)(message) as Record<string, unknown>
}

const expectError = (reply: Reply, status: number, message: string, extra: Record<string, unknown> = {}) => {
  assert.strictEqual(reply.status, status, reply.text)
  assert.deepStrictEqual(messageOf(reply), {
    action: "ErrorResponse",
    message,
    serverSparkVersion: version,
    ...extra
  })
}

const please = " Please submit requests through http://[host]:[port]/v1/submissions/..."

const createBody = (fields: Record<string, unknown>) =>
  JSON.stringify({
    action: "CreateSubmissionRequest",
    appArgs: [],
    clientSparkVersion: "4.3.0",
    environmentVariables: {},
    sparkProperties: { "spark.app.name": "test" },
    ...fields
  })

const statusOf = (url: string, driverId: string) =>
  call(`${url}/v1/submissions/status/${driverId}`).pipe(Effect.map(messageOf))

const untilState = (url: string, driverId: string, state: string) =>
  Polling.eventually(statusOf(url, driverId), (status) => status.driverState === state, {
    timeout: 60_000,
    interval: "200 millis",
    describe: (last) => `the driver is ${JSON.stringify(last)}`
  })

const noDrivers = (masterUrl: string, secret?: string) =>
  Effect.gen(function*() {
    const state = yield* masterState(masterUrl, secret)
    assert.deepStrictEqual([...state.activeDrivers, ...state.completedDrivers], [])
  })

const pi = Path.join(root, "examples", "pi.ts")

describe.skipIf(plaintextOnly)("the REST submission server", () => {
  it.scopedLive(
    "answers every row of Spark's error table, malformed requests and wrong methods as Spark does",
    () =>
      Effect.gen(function*() {
        const master = yield* restMaster(["--conf", "kindling.master.rest.maxRequestBodySize=1m"])
        const url = master.rest
        expectError(yield* call(`${url}/`), 400, `Missing protocol version.${please}`)
        expectError(yield* call(`${url}/v1`), 400, `Missing the /submissions prefix.${please}`)
        const noAction =
          "Missing an action: please specify one of /create, /kill, /killall, /clear, /status, or /readyz."
        expectError(yield* call(`${url}/v1/submissions`), 400, `${noAction}${please}`)
        expectError(yield* post(`${url}/v1/submissions/launch`), 400, `${noAction}${please}`)
        for (const [path, version] of [["/v2/submissions/create", "v2"], ["/readyz", "readyz"]] as const) {
          expectError(yield* call(`${url}${path}`), 468, `Unknown protocol version '${version}'.${please}`, {
            highestProtocolVersion: "v1"
          })
        }
        expectError(yield* call(`${url}/v1/submissions/status`), 400, "Submission ID is missing in status request.")
        expectError(yield* call(`${url}/v1/submissions/status/`), 400, "Submission ID is missing in status request.")
        expectError(yield* post(`${url}/v1/submissions/kill`), 400, "Submission ID is missing in kill request.")
        expectError(yield* call(`${url}/v1/submissions/create`), 405, "HTTP method GET is not supported by this URL")
        expectError(yield* post(`${url}/v1/submissions/status/x`), 405, "HTTP method POST is not supported by this URL")

        const create = `${url}/v1/submissions/create`
        const notJson = yield* post(create, "nope")
        assert.strictEqual(notJson.status, 400)
        assert.match(messageOf(notJson).message as string, /^Malformed request: the body is not JSON: /)
        expectError(yield* post(create, "{}"), 400, "Malformed request: Action field not found in JSON:\n{}")
        expectError(
          yield* post(create, `{"action":"CreateSubmissionRequest"}`),
          400,
          "Malformed request: Validation of message CreateSubmissionRequest failed: appResource: is missing"
        )
        expectError(
          yield* post(create, createBody({ appResource: pi, sparkProperties: { "spark.driver.cores": "two" } })),
          400,
          "Malformed request: Validation of message CreateSubmissionRequest failed: Property 'spark.driver.cores' " +
            "expected numeric value: actual was 'two'."
        )
        expectError(
          yield* post(
            create,
            RestMessages.toJson(RestMessages.ErrorResponse.make({ message: "x", serverSparkVersion: "1" }))
          ),
          400,
          "Received message of unexpected type ErrorResponse."
        )
        expectError(
          yield* post(create, createBody({ appResource: pi, padding: "x".repeat(2 * 1024 * 1024) })),
          413,
          "The request body exceeds the maximum allowed size (1048576 bytes). Adjust " +
            "kindling.master.rest.maxRequestBodySize to change the limit."
        )
        assert.isTrue(isRunning(master.node.pid))
        yield* noDrivers(master.url)
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive(
    "create, status, kill, killall, clear and readyz: an app runs to FINISHED on a worker, a kill stops another",
    () =>
      Effect.gen(function*() {
        const { dir, rest: url } = yield* restCluster(1)
        const at = (path: string) => `${url}/v1/submissions/${path}`
        assert.deepStrictEqual(messageOf(yield* call(at("readyz"))), {
          action: "ReadyzResponse",
          message: "",
          serverSparkVersion: version,
          success: true
        })
        assert.deepStrictEqual(yield* statusOf(url, "driver-unknown"), {
          action: "SubmissionStatusResponse",
          serverSparkVersion: version,
          submissionId: "driver-unknown",
          success: false
        })
        assert.deepStrictEqual(messageOf(yield* post(at("kill/driver-unknown"))), {
          action: "KillSubmissionResponse",
          message: "Driver driver-unknown has already finished or does not exist",
          serverSparkVersion: version,
          submissionId: "driver-unknown",
          success: false
        })

        // Spark's own client sends a main class and properties Kindling has no use for; the answer says so.
        const created = messageOf(
          yield* post(
            at("create"),
            createBody({
              appResource: `file://${pi}`,
              appArgs: ["4"],
              mainClass: "org.apache.spark.examples.SparkPi",
              sparkProperties: { "spark.app.name": "Pi", "spark.executor.memory": "512m", "spark.jars": "pi.jar" },
              extra: true
            })
          )
        )
        const driverId = created.submissionId as string
        assert.match(driverId, /^driver-\d{14}-\d{4}$/)
        assert.deepStrictEqual(created, {
          action: "CreateSubmissionResponse",
          message: `Driver successfully submitted as ${driverId}. mainClass org.apache.spark.examples.SparkPi is ` +
            "ignored: a Kindling app runs its module's default export. Ignored properties Kindling does not use: " +
            "spark.jars.",
          serverSparkVersion: version,
          submissionId: driverId,
          success: true,
          unknownFields: ["extra"]
        })
        const finished = yield* untilState(url, driverId, "FINISHED")
        assert.strictEqual(finished.success, true)
        assert.match(finished.workerId as string, /^worker-/)
        assert.match(finished.workerHostPort as string, /^127\.0\.0\.1:\d+$/)
        const stdout = Path.join(dir, "worker-0", driverId, "stdout")
        assert.match(Fs.readFileSync(stdout, "utf8"), /^Pi is roughly 3\.1\d*\n$/)

        assert.deepStrictEqual(messageOf(yield* post(at("clear"))), {
          action: "ClearResponse",
          message: "",
          serverSparkVersion: version,
          success: true
        })
        assert.strictEqual((yield* statusOf(url, driverId)).success, false)

        const pids = Path.join(dir, "pids")
        const running = messageOf(
          yield* post(
            at("create"),
            createBody({
              appResource: app(dir, "forever.mjs", forever),
              appArgs: [pids]
            })
          )
        )
        const runningId = running.submissionId as string
        yield* untilState(url, runningId, "RUNNING")
        yield* Polling.eventually(Effect.sync(() => pidsIn(pids)), (found) => found.length === 1, { timeout: 30_000 })
        assert.deepStrictEqual(messageOf(yield* post(at(`kill/${runningId}`))), {
          action: "KillSubmissionResponse",
          message: `Kill request for ${runningId} submitted`,
          serverSparkVersion: version,
          submissionId: runningId,
          success: true
        })
        yield* untilState(url, runningId, "KILLED")
        assert.isFalse(isRunning(pidsIn(pids)[0]!))
        assert.deepStrictEqual(messageOf(yield* post(at("killall"))), {
          action: "KillAllSubmissionResponse",
          message: "Kill request for all drivers submitted",
          serverSparkVersion: version,
          success: true
        })
      }),
    Deadlines.scaled(120_000)
  )

  it.scopedLive("refuses with success: false what it cannot run, and submits nothing", () =>
    Effect.gen(function*() {
      const master = yield* restMaster()
      const dir = yield* temporaryDirectory
      const refusals: ReadonlyArray<readonly [Record<string, unknown>, RegExp]> = [
        [{ appResource: "/no/such/app.ts" }, /^The app \/no\/such\/app\.ts does not exist on the master's host\.$/],
        [{ appResource: "examples/pi.ts" }, /is a relative path: give a file: URL or an absolute path/],
        [{ appResource: "https://example.com/app.mjs" }, /^Unsupported app resource https:\/\/example\.com/],
        [{ appResource: dir }, /is not a file/],
        [{ appResource: app(dir, "bad.ts", "export default (;\n") }, /cannot be built:[\s\S]*bad\.ts:1:16/],
        [{ appResource: app(dir, "plain.mjs", "export const x = 1\n") }, /has no default export/],
        [
          { appResource: `kindling://${master.url.slice("kindling://".length)}/artifact/${"0".repeat(64)}/app.mjs` },
          /is not stored on this master/
        ],
        [{ appResource: pi, sparkProperties: { "kindling.executor.memroy": "1g" } }, /kindling\.executor\.memroy/],
        [{ appResource: pi, sparkProperties: { "spark.executor.cores": "0" } }, /kindling\.executor\.cores/]
      ]
      for (const [fields, reason] of refusals) {
        const answer = messageOf(yield* post(`${master.rest}/v1/submissions/create`, createBody(fields)))
        assert.strictEqual(answer.success, false, JSON.stringify(answer))
        assert.isUndefined(answer.submissionId)
        assert.match(answer.message as string, reason)
      }
      yield* noDrivers(master.url)
    }), Deadlines.scaled(60_000))

  it.scopedLive(
    "refuses an app resource that matches none of kindling.master.rest.allowedAppResourcePatterns",
    () =>
      Effect.gen(function*() {
        const master = yield* restMaster([
          "--conf",
          "kindling.master.rest.allowedAppResourcePatterns=file:///srv/apps/.*,/srv/apps/.*"
        ])
        const answer = messageOf(yield* post(`${master.rest}/v1/submissions/create`, createBody({ appResource: pi })))
        assert.deepStrictEqual(answer, {
          action: "CreateSubmissionResponse",
          message: `The app resource ${pi} is not allowed: it matches none of ` +
            "kindling.master.rest.allowedAppResourcePatterns.",
          serverSparkVersion: version,
          success: false
        })
        yield* noDrivers(master.url)
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive(
    "with a secret: no or a bad token is a 401 and nothing is submitted; a signed token is served",
    () =>
      Effect.gen(function*() {
        const secret = "a secret of at least thirty-two bytes, for HS256"
        const auth = ["--conf", "kindling.authenticate=true", "--conf", `kindling.authenticate.secret=${secret}`]
        const master = yield* restMaster(auth)
        const create = `${master.rest}/v1/submissions/create`
        const body = createBody({ appResource: pi })
        const tokens: ReadonlyArray<readonly [Record<string, string>, RegExp]> = [
          [{}, /^Unauthorized: send Authorization: Bearer <token>/],
          [{ authorization: `Basic ${Buffer.from(`user:${secret}`).toString("base64")}` }, /is not Bearer <token>/],
          [{ authorization: RestAuth.header(yield* RestAuth.sign("some other secret")) }, /signature/],
          [{ authorization: RestAuth.header(yield* RestAuth.sign(secret, { lifetimeSeconds: -120 })) }, /"exp"/]
        ]
        for (const [headers, reason] of tokens) {
          for (
            const reply of [
              yield* post(create, body, headers),
              yield* call(`${master.rest}/v1/submissions/readyz`, { headers })
            ]
          ) {
            assert.strictEqual(reply.status, 401, reply.text)
            assert.strictEqual(reply.headers.get("www-authenticate"), "Bearer")
            assert.match(messageOf(reply).message as string, reason)
          }
        }
        yield* noDrivers(master.url, secret)
        const signed = { authorization: RestAuth.header(yield* RestAuth.sign(secret)) }
        const answer = messageOf(yield* post(create, body, signed))
        assert.strictEqual(answer.success, true, JSON.stringify(answer))
        // The command signs its own token when it has the secret.
        const status = yield* run([
          "submit",
          "--master",
          master.rest,
          ...auth,
          "--status",
          answer.submissionId as string
        ])
        assert.strictEqual(status.code, 0, status.stderr)
        assert.strictEqual(JSON.parse(status.stdout).state, "SUBMITTED")
        const refused = yield* run(["submit", "--master", master.rest, "--status", answer.submissionId as string])
        assert.strictEqual(refused.code, 1)
        assert.include(refused.stderr, "Unauthorized")
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive(
    "does not start on an address other than loopback without a secret, unless authentication is off",
    () =>
      Effect.gen(function*() {
        const open = ["--conf", "kindling.master.rest.host=0.0.0.0"]
        const refused = yield* run(["master", "--host", "127.0.0.1", "--port", "0", ...rest, ...open])
        assert.strictEqual(refused.code, 1)
        assert.include(refused.stderr, "The REST server would listen on 0.0.0.0 (0.0.0.0), not a loopback address")
        const unprotected = yield* start([
          "master",
          "--host",
          "127.0.0.1",
          "--port",
          "0",
          "--conf",
          "kindling.master.ui.port=0",
          ...rest,
          ...open,
          "--conf",
          "kindling.authenticate=false"
        ])
        assert.match(yield* restUrlOf(unprotected), /^http:\/\/0\.0\.0\.0:\d+$/)
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive(
    "random bodies to /create never crash the server and never start a driver",
    () =>
      Effect.gen(function*() {
        const master = yield* restMaster()
        const create = `${master.rest}/v1/submissions/create`
        // Anything, JSON or not, and requests that decode but name apps that cannot be found.
        const requests = Arbitrary.make(RestMessages.CreateSubmissionRequest).map((request) =>
          RestMessages.toJson(RestMessages.CreateSubmissionRequest.make({
            ...request,
            appResource: `/nowhere/${request.appResource}`
          }))
        )
        const bodies = fc.oneof(
          fc.string(),
          fc.json(),
          fc.jsonValue().map((value) => JSON.stringify({ action: "CreateSubmissionRequest", value })),
          fc.dictionary(fc.constantFrom("action", "appResource", "sparkProperties", "appArgs", "x"), fc.jsonValue())
            .map((value) => JSON.stringify(value)),
          requests
        )
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(bodies, async (body) => {
              const response = await fetch(create, { method: "POST", body })
              const text = await response.text()
              assert.include([200, 400], response.status, text)
              const answer = JSON.parse(text) as { success?: boolean }
              assert.notStrictEqual(answer.success, true, text)
            }),
            { numRuns: 150 }
          )
        )
        assert.isTrue(isRunning(master.node.pid))
        yield* noDrivers(master.url)
      }),
    Deadlines.scaled(90_000)
  )
})

describe("kindling submit over REST", () => {
  it.scopedLive(
    "submits and follows an app over REST; --status and --kill work over REST and over RPC",
    () =>
      Effect.gen(function*() {
        const { dir, master, rest: url } = yield* restCluster(1)
        const restPort = url.slice(url.lastIndexOf(":") + 1)
        const waited = yield* run(["submit", "--master", url, "--wait", "examples/pi.ts", "4"])
        assert.strictEqual(waited.code, 0, waited.stderr)
        const [driverId, ended] = waited.stdout.trim().split("\n")
        assert.strictEqual(ended, `${driverId} FINISHED`)
        assert.include(waited.stderr, `Driver successfully submitted as ${driverId}`)
        assert.notMatch(waited.stderr, /WARN|ERROR/)

        // A kindling:// URL of the REST port is found out to be one.
        const pids = Path.join(dir, "pids")
        const submitted = yield* run([
          "submit",
          "--master",
          `kindling://127.0.0.1:${restPort}`,
          "--deploy-mode",
          "cluster",
          app(dir, "forever.mjs", forever),
          pids
        ])
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        assert.notMatch(submitted.stderr, /WARN|ERROR/)
        const running = submitted.stdout.trim()
        yield* Polling.eventually(Effect.sync(() => pidsIn(pids)), (found) => found.length === 1, { timeout: 30_000 })

        const masters = [url, `kindling://127.0.0.1:${restPort}`, master.url]
        const statuses = []
        for (const via of masters) {
          const status = yield* run(["submit", "--master", via, "--status", running])
          assert.strictEqual(status.code, 0, status.stderr)
          statuses.push(status.stdout)
        }
        statuses.push((yield* run(["status", "--master", url, running])).stdout)
        assert.strictEqual(new Set(statuses).size, 1)
        assert.include(JSON.parse(statuses[0]!), { driverId: running, state: "RUNNING", exception: null })

        const killed = yield* run(["submit", "--master", url, "--kill", running])
        assert.strictEqual(killed.code, 0, killed.stderr)
        assert.strictEqual(killed.stdout, `Kill request for ${running} submitted\n`)
        yield* Polling.eventually(
          run(["submit", "--master", master.url, "--status", running]),
          (status) => status.stdout.includes(`"state":"KILLED"`),
          { timeout: 30_000, interval: "200 millis" }
        )
        assert.isFalse(isRunning(pidsIn(pids)[0]!))

        // --kill over RPC, of a driver submitted over REST.
        const second = yield* run(["submit", "--master", url, app(dir, "forever2.mjs", forever), `${pids}-2`])
        assert.strictEqual(second.code, 0, second.stderr)
        yield* Polling.eventually(
          Effect.sync(() => pidsIn(`${pids}-2`)),
          (found) => found.length === 1,
          { timeout: 30_000 }
        )
        const rpcKill = yield* run(["submit", "--master", master.url, "--kill", second.stdout.trim()])
        assert.strictEqual(rpcKill.code, 0, rpcKill.stderr)
        assert.strictEqual(rpcKill.stdout, `Kill request for ${second.stdout.trim()} submitted\n`)
        const unknown = yield* run(["submit", "--master", url, "--kill", "driver-unknown"])
        assert.strictEqual(unknown.code, 1)
        assert.include(unknown.stderr, "kindling: Driver driver-unknown has already finished or does not exist")
      }),
    Deadlines.scaled(150_000)
  )
})
