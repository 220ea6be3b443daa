import { assert, describe, it } from "@effect/vitest"
import {
  LeaderElection,
  type MasterCore,
  Persistence,
  StoreTrust,
  ZooKeeper,
  ZooKeeperRecovery
} from "@kindling/master"
import { Descriptions, Ids, QueryMessages, RpcAddress } from "@kindling/protocol"
import { Deadlines, Polling } from "@kindling/protocol/testing"
import { Context, Effect, Exit, FastCheck as fc, Layer, Option, Schema } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
// The cli's fixture: Debian's ZooKeeper server on a free loopback port.
import { zooKeeperServer } from "../../cli/test/fixtures/zookeeper.js"

// ---- records ---------------------------------------------------------------------------------------------

const command = new Descriptions.Command({
  mainModule: "m",
  arguments: ["a"],
  environment: { K: "v" },
  nodeOptions: []
})

const application = (id: string, startTime: number, name = "app") =>
  new QueryMessages.ApplicationInfo({
    id: Ids.AppId.make(id),
    startTime,
    submitDate: startTime,
    desc: new Descriptions.ApplicationDescription({
      name,
      maxCores: Option.some(4),
      memoryPerExecutorMB: 512,
      command,
      appUiUrl: "http://10.0.0.2:4040",
      eventLogDir: Option.none(),
      eventLogCodec: Option.none(),
      coresPerExecutor: Option.some(1),
      initialExecutorLimit: Option.none(),
      user: "test",
      resourceReqsPerExecutor: [new Descriptions.ResourceRequirement({ resourceName: "gpu", amount: 1 })]
    }),
    driver: RpcAddress.endpoint(RpcAddress.make("10.0.0.2", 40000), "AppClient"),
    state: "WAITING",
    coresGranted: 1,
    executors: [
      new QueryMessages.ExecutorInfo({
        appId: Ids.AppId.make(id),
        execId: 0,
        workerId: Ids.WorkerId.make("worker-20260101000000-10.0.0.3-7078"),
        cores: 1,
        memory: 512,
        state: "RUNNING",
        resources: { gpu: new Descriptions.ResourceInformation({ name: "gpu", addresses: ["0"] }) }
      })
    ],
    executorLimit: Option.some(2),
    endTime: Option.none()
  })

const driver = (id: string, startTime: number, mem = 1024) =>
  new QueryMessages.DriverInfo({
    id: Ids.DriverId.make(id),
    startTime,
    submitDate: startTime,
    desc: new Descriptions.DriverDescription({
      appUrl: "file:///a.js",
      mem,
      cores: 1,
      supervise: true,
      command,
      resourceReqs: []
    }),
    state: "RUNNING",
    workerId: Option.some(Ids.WorkerId.make("worker-20260101000000-10.0.0.3-7078")),
    exception: Option.some(new Descriptions.RemoteException({ name: "Error", message: "boom" })),
    resources: {}
  })

const worker = (id: string, cores = 2) =>
  new QueryMessages.WorkerInfo({
    id: Ids.WorkerId.make(id),
    host: "10.0.0.3",
    port: 7078,
    webUiAddress: "http://10.0.0.3:8081",
    cores,
    coresUsed: 0,
    memory: 2048,
    memoryUsed: 0,
    resources: {},
    resourcesUsed: {},
    state: "ALIVE",
    lastHeartbeat: 1_700_000_000_000,
    executors: [],
    drivers: [Ids.DriverId.make("driver-20260101000000-0000")]
  })

const appRecord = (value: QueryMessages.ApplicationInfo): MasterCore.Record => ({ kind: "app", value })
const driverRecord = (value: QueryMessages.DriverInfo): MasterCore.Record => ({ kind: "driver", value })
const workerRecord = (value: QueryMessages.WorkerInfo): MasterCore.Record => ({ kind: "worker", value })

// Compared in their encoded (JSON-ready) forms, so that the assertion is about what is stored.
const encodeStored = (stored: MasterCore.Stored) => ({
  apps: stored.apps.map((a) => Schema.encodeSync(QueryMessages.ApplicationInfo)(a)),
  drivers: stored.drivers.map((d) => Schema.encodeSync(QueryMessages.DriverInfo)(d)),
  workers: stored.workers.map((w) => Schema.encodeSync(QueryMessages.WorkerInfo)(w))
})
const encodeRecord = (record: MasterCore.Record): unknown =>
  record.kind === "app"
    ? Schema.encodeSync(QueryMessages.ApplicationInfo)(record.value)
    : record.kind === "driver"
    ? Schema.encodeSync(QueryMessages.DriverInfo)(record.value)
    : Schema.encodeSync(QueryMessages.WorkerInfo)(record.value)

// ---- a fresh directory per test ----------------------------------------------------------------------------

const scratch = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-persistence-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** A directory (the parent of the recovery directory, to see any file that escapes) and an engine on it. */
const engine = Effect.gen(function*() {
  const parent = yield* scratch
  const directory = Path.join(parent, "recovery")
  const persistence = yield* Persistence.makeFileSystem(directory)
  return { parent, directory, persistence }
})

const listing = (dir: string) => Fs.readdirSync(dir).sort()

/** Every path below `dir`, relative to it. */
const walk = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? [entry.name + "/", ...walk(Path.join(dir, entry.name)).map((p) => Path.join(entry.name, p))]
      : [entry.name]
  )

const appId = "app-20260101000000-0000"
const driverId = "driver-20260101000000-0000"
const workerId = "worker-20260101000000-10.0.0.3-7078"

describe("Persistence", () => {
  describe("layerNone", () => {
    it.effect("stores nothing", () =>
      Effect.gen(function*() {
        const persistence = yield* Persistence.Persistence
        yield* persistence.persist(appRecord(application(appId, 1)))
        yield* persistence.persist(driverRecord(driver(driverId, 1)))
        yield* persistence.persist(workerRecord(worker(workerId)))
        yield* persistence.unpersist("app", "nothing-there")
        const stored = yield* persistence.readAll
        assert.deepStrictEqual(encodeStored(stored), { apps: [], drivers: [], workers: [] })
      }).pipe(Effect.provide(Persistence.layerNone)))
  })

  describe("FILESYSTEM", () => {
    it.scopedLive("creates its directory, including missing parents", () =>
      Effect.gen(function*() {
        const parent = yield* scratch
        const directory = Path.join(parent, "a", "b", "recovery")
        const persistence = yield* Persistence.makeFileSystem(directory)
        assert.isTrue(Fs.statSync(directory).isDirectory())
        const stored = yield* persistence.readAll
        assert.deepStrictEqual(encodeStored(stored), { apps: [], drivers: [], workers: [] })
      }))

    it.scopedLive("readAll returns what was persisted, for all three kinds", () =>
      Effect.gen(function*() {
        const { directory, persistence } = yield* engine
        const a = application(appId, 1_700_000_000_001)
        const d = driver(driverId, 1_700_000_000_002)
        const w = worker(workerId)
        yield* persistence.persist(appRecord(a))
        yield* persistence.persist(driverRecord(d))
        yield* persistence.persist(workerRecord(w))
        assert.deepStrictEqual(listing(directory), [`app_${appId}`, `driver_${driverId}`, `worker_${workerId}`])
        const stored = yield* persistence.readAll
        assert.deepStrictEqual(encodeStored(stored), {
          apps: [Schema.encodeSync(QueryMessages.ApplicationInfo)(a)],
          drivers: [Schema.encodeSync(QueryMessages.DriverInfo)(d)],
          workers: [Schema.encodeSync(QueryMessages.WorkerInfo)(w)]
        })
        // Decoded as the model classes, not as plain objects.
        assert.instanceOf(stored.apps[0], QueryMessages.ApplicationInfo)
        assert.instanceOf(stored.drivers[0], QueryMessages.DriverInfo)
        assert.instanceOf(stored.workers[0], QueryMessages.WorkerInfo)
        assert.isTrue(Option.isSome(stored.drivers[0]!.exception))
      }))

    it.scopedLive("a second engine on the same directory reads what the first stored (a restart)", () =>
      Effect.gen(function*() {
        const { directory, persistence } = yield* engine
        const d = driver(driverId, 5)
        yield* persistence.persist(driverRecord(d))
        const restarted = yield* Persistence.makeFileSystem(directory)
        const stored = yield* restarted.readAll
        assert.deepStrictEqual(encodeStored(stored).drivers, [Schema.encodeSync(QueryMessages.DriverInfo)(d)])
      }))

    it.scopedLive("persisting the same id twice keeps only the latest", () =>
      Effect.gen(function*() {
        const { directory, persistence } = yield* engine
        yield* persistence.persist(driverRecord(driver(driverId, 1, 1024)))
        yield* persistence.persist(driverRecord(driver(driverId, 1, 4096)))
        yield* persistence.persist(workerRecord(worker(workerId, 2)))
        yield* persistence.persist(workerRecord(worker(workerId, 8)))
        assert.deepStrictEqual(listing(directory), [`driver_${driverId}`, `worker_${workerId}`])
        const stored = yield* persistence.readAll
        assert.strictEqual(stored.drivers.length, 1)
        assert.strictEqual(stored.drivers[0]!.desc.mem, 4096)
        assert.strictEqual(stored.workers.length, 1)
        assert.strictEqual(stored.workers[0]!.cores, 8)
      }))

    it.scopedLive("the same id under different kinds are different records", () =>
      Effect.gen(function*() {
        const { persistence } = yield* engine
        yield* persistence.persist(appRecord(application("x", 1)))
        yield* persistence.persist(driverRecord(driver("x", 1)))
        yield* persistence.unpersist("app", "x")
        const stored = yield* persistence.readAll
        assert.deepStrictEqual(stored.apps.map((a) => a.id), [])
        assert.deepStrictEqual(stored.drivers.map((d) => d.id), ["x"])
      }))

    it.scopedLive("unpersist removes the record, and removing a missing one is not an error", () =>
      Effect.gen(function*() {
        const { directory, persistence } = yield* engine
        yield* persistence.persist(appRecord(application(appId, 1)))
        yield* persistence.persist(driverRecord(driver(driverId, 1)))
        yield* persistence.persist(workerRecord(worker(workerId)))
        yield* persistence.unpersist("app", appId)
        yield* persistence.unpersist("worker", workerId)
        assert.deepStrictEqual(listing(directory), [`driver_${driverId}`])
        const stored = yield* persistence.readAll
        assert.deepStrictEqual(stored.apps, [])
        assert.deepStrictEqual(stored.workers, [])
        assert.deepStrictEqual(stored.drivers.map((d) => d.id), [driverId])
        yield* persistence.unpersist("app", appId)
        yield* persistence.unpersist("driver", "driver-never-stored")
        assert.deepStrictEqual(listing(directory), [`driver_${driverId}`])
      }))

    it.scopedLive("readAll orders apps and drivers by startTime, whatever their ids", () =>
      Effect.gen(function*() {
        const { persistence } = yield* engine
        // Ids in the opposite order of start times, so that file-name order is not the answer.
        const apps = [application("app-c", 10), application("app-b", 30), application("app-a", 20)]
        const drivers = [driver("driver-z", 3), driver("driver-y", 1), driver("driver-x", 2), driver("driver-w", 2)]
        for (const a of apps) yield* persistence.persist(appRecord(a))
        for (const d of drivers) yield* persistence.persist(driverRecord(d))
        const stored = yield* persistence.readAll
        assert.deepStrictEqual(stored.apps.map((a) => a.id), ["app-c", "app-a", "app-b"])
        // Equal start times fall back to the id.
        assert.deepStrictEqual(stored.drivers.map((d) => d.id), ["driver-y", "driver-w", "driver-x", "driver-z"])
      }))

    describe("crash mid-write never corrupts or loses state", () => {
      it.scopedLive("a leftover half-written temporary file is ignored and deleted, the record is intact", () =>
        Effect.gen(function*() {
          const { directory, persistence } = yield* engine
          const d = driver(driverId, 7)
          yield* persistence.persist(driverRecord(d))
          const record = `driver_${driverId}`
          const full = Fs.readFileSync(Path.join(directory, record), "utf8")
          // An interrupted overwrite of the record, and an interrupted first write of another one.
          const torn = `.tmp-0123456789ab-${record}`
          const tornNew = `.tmp-ba9876543210-app_${appId}`
          Fs.writeFileSync(Path.join(directory, torn), full.slice(0, Math.floor(full.length / 2)))
          Fs.writeFileSync(Path.join(directory, tornNew), "{\"id\":\"app-2026")
          const stored = yield* persistence.readAll
          assert.deepStrictEqual(encodeStored(stored), {
            apps: [],
            drivers: [Schema.encodeSync(QueryMessages.DriverInfo)(d)],
            workers: []
          })
          assert.deepStrictEqual(listing(directory), [record])
          assert.strictEqual(Fs.readFileSync(Path.join(directory, record), "utf8"), full)
        }))

      it.scopedLive("a crash between the temporary write and the rename leaves the old record", () =>
        Effect.gen(function*() {
          const { directory, persistence } = yield* engine
          const old = worker(workerId, 2)
          yield* persistence.persist(workerRecord(old))
          // The complete new version was written and flushed, but the rename never happened.
          const record = `worker_${workerId}`
          const newer = Schema.encodeSync(Schema.parseJson(QueryMessages.WorkerInfo))(worker(workerId, 16))
          Fs.writeFileSync(Path.join(directory, `.tmp-deadbeef0001-${record}`), newer)
          const stored = yield* persistence.readAll
          assert.deepStrictEqual(encodeStored(stored).workers, [Schema.encodeSync(QueryMessages.WorkerInfo)(old)])
          assert.deepStrictEqual(listing(directory), [record])
          // And the engine goes on working: the next write lands.
          yield* persistence.persist(workerRecord(worker(workerId, 16)))
          const after = yield* persistence.readAll
          assert.deepStrictEqual(after.workers.map((w) => w.cores), [16])
        }))

      it.scopedLive("persist leaves no temporary file behind", () =>
        Effect.gen(function*() {
          const { directory, persistence } = yield* engine
          for (let i = 0; i < 5; i++) yield* persistence.persist(appRecord(application(appId, i)))
          assert.deepStrictEqual(listing(directory), [`app_${appId}`])
        }))
    })

    it.scopedLive("ids with odd characters never produce files outside the directory", () =>
      Effect.gen(function*() {
        const { directory, parent, persistence } = yield* engine
        const ids = ["../escape", "..", ".", "a/b/c", "/etc/passwd", "with space", "..\\win", "%2F..%2F", "x?y#z&"]
        for (const id of ids) {
          yield* persistence.persist(appRecord(application(id, ids.indexOf(id))))
          yield* persistence.persist(driverRecord(driver(id, ids.indexOf(id))))
          yield* persistence.persist(workerRecord(worker(id)))
        }
        // Only the recovery directory in its parent, and only flat files in it.
        assert.deepStrictEqual(listing(parent), ["recovery"])
        const files = walk(directory)
        assert.strictEqual(files.length, ids.length * 3)
        for (const file of files) {
          assert.isFalse(file.includes("/"), file)
          assert.match(file, /^(app|driver|worker)_/)
        }
        assert.include(files, `app_${encodeURIComponent("../escape")}`)
        assert.include(files, `driver_${encodeURIComponent("with space")}`)
        const stored = yield* persistence.readAll
        assert.deepStrictEqual(stored.apps.map((a) => a.id), ids)
        assert.deepStrictEqual(stored.drivers.map((d) => d.id), ids)
        assert.deepStrictEqual(stored.workers.map((w) => w.id).sort(), [...ids].sort())
        for (const id of ids) {
          yield* persistence.unpersist("app", id)
          yield* persistence.unpersist("driver", id)
          yield* persistence.unpersist("worker", id)
        }
        assert.deepStrictEqual(walk(directory), [])
        assert.deepStrictEqual(listing(parent), ["recovery"])
      }))

    // A worker id embeds its host name, and "build.tmp-3.example" is a valid one: its record must not be taken
    // for the leftover of an interrupted write.
    it.scopedLive("a record whose id contains \".tmp-\" survives readAll", () =>
      Effect.gen(function*() {
        const { persistence } = yield* engine
        const id = "worker-20260101000000-build.tmp-3.example-7078"
        yield* persistence.persist(workerRecord(worker(id)))
        const stored = yield* persistence.readAll
        assert.deepStrictEqual(stored.workers.map((w) => w.id), [id])
      }))

    it.scopedLive("files that are not records are left alone", () =>
      Effect.gen(function*() {
        const { directory, persistence } = yield* engine
        Fs.writeFileSync(Path.join(directory, "README"), "not a record")
        Fs.writeFileSync(Path.join(directory, "application_x"), "not a record either")
        yield* persistence.persist(appRecord(application(appId, 1)))
        const stored = yield* persistence.readAll
        assert.deepStrictEqual(stored.apps.map((a) => a.id), [appId])
        assert.deepStrictEqual(listing(directory), [`app_${appId}`, "README", "application_x"].sort())
      }))

    it.scopedLive("a corrupt record file fails readAll with a PersistenceError naming the file", () =>
      Effect.gen(function*() {
        const { directory, persistence } = yield* engine
        yield* persistence.persist(appRecord(application(appId, 1)))
        const corrupt = Path.join(directory, `driver_${driverId}`)
        Fs.writeFileSync(corrupt, "this is not JSON {")
        const exit = yield* Effect.exit(persistence.readAll)
        assert.isTrue(Exit.isFailure(exit))
        const error = yield* Effect.flip(persistence.readAll)
        assert.instanceOf(error, Persistence.PersistenceError)
        assert.strictEqual(error._tag, "PersistenceError")
        assert.strictEqual(error.path, corrupt)
        assert.include(error.message, corrupt)
        assert.include(error.message, "decode")
        // Reading does not destroy the evidence.
        assert.strictEqual(Fs.readFileSync(corrupt, "utf8"), "this is not JSON {")
      }))

    it.scopedLive("valid JSON of the wrong shape is a PersistenceError too", () =>
      Effect.gen(function*() {
        const { directory, persistence } = yield* engine
        const file = Path.join(directory, `worker_${workerId}`)
        Fs.writeFileSync(file, JSON.stringify({ id: workerId, cores: "many" }))
        const error = yield* Effect.flip(persistence.readAll)
        assert.instanceOf(error, Persistence.PersistenceError)
        assert.include(error.message, file)
      }))

    it.scopedLive("a directory that cannot be created is a PersistenceError", () =>
      Effect.gen(function*() {
        const parent = yield* scratch
        const file = Path.join(parent, "a-file")
        Fs.writeFileSync(file, "")
        const error = yield* Effect.flip(Persistence.makeFileSystem(Path.join(file, "recovery")))
        assert.instanceOf(error, Persistence.PersistenceError)
        assert.strictEqual(error.operation, "create")
      }))

    describe("trusts only what the master's user wrote, and with a secret only what the cluster sealed", () => {
      const untrusted = <A, E>(effect: Effect.Effect<A, E>) =>
        Effect.flip(effect).pipe(
          Effect.map((error) => {
            assert.instanceOf(error, StoreTrust.UntrustedStore, String(error))
            return error as StoreTrust.UntrustedStore
          })
        )
      const isRoot = process.getuid?.() === 0

      it.scopedLive("creates its directory for the master's user alone, and its records for it alone", () =>
        Effect.gen(function*() {
          const { directory, persistence } = yield* engine
          yield* persistence.persist(driverRecord(driver(driverId, 1)))
          assert.strictEqual(Fs.statSync(directory).mode & 0o777, 0o700)
          assert.strictEqual(Fs.statSync(Path.join(directory, `driver_${driverId}`)).mode & 0o777, 0o600)
        }))

      it.scopedLive("a directory other users may write to is refused before anything is read", () =>
        Effect.gen(function*() {
          const parent = yield* scratch
          const directory = Path.join(parent, "recovery")
          Fs.mkdirSync(directory)
          Fs.chmodSync(directory, 0o1777)
          const error = yield* untrusted(Persistence.makeFileSystem(directory))
          assert.strictEqual(error.path, directory)
          assert.match(error.message, /writable by every user \(mode 1777\).*kindling\.deploy\.recoveryDirectory/)
        }))

      it.scopedLive("a record other users may write to, or a link, is refused and nothing is recovered", () =>
        Effect.gen(function*() {
          const { directory, persistence } = yield* engine
          yield* persistence.persist(appRecord(application(appId, 1)))
          const planted = Path.join(directory, `driver_${driverId}`)
          yield* persistence.persist(driverRecord(driver(driverId, 2)))
          Fs.chmodSync(planted, 0o666)
          assert.strictEqual((yield* untrusted(persistence.readAll)).path, planted)
          Fs.rmSync(planted)
          Fs.symlinkSync(Path.join(directory, `app_${appId}`), planted)
          assert.match((yield* untrusted(persistence.readAll)).message, /is a symbolic link, not a file/)
        }))

      it.scopedLive.skipIf(!isRoot)(
        "a record another user owns is refused (needs root to plant it)",
        () =>
          Effect.gen(function*() {
            const { directory, persistence } = yield* engine
            const planted = Path.join(directory, `driver_${driverId}`)
            yield* persistence.persist(driverRecord(driver(driverId, 2)))
            Fs.chownSync(planted, 65534, 65534)
            const error = yield* untrusted(persistence.readAll)
            assert.match(error.message, /is owned by user 65534, not by the master's user \(0\)/)
            // And the directory.
            Fs.chownSync(directory, 65534, 65534)
            assert.strictEqual((yield* untrusted(Persistence.makeFileSystem(directory))).path, directory)
          })
      )

      it.scopedLive("with the cluster's secret: a record without its seal, or sealed under another secret, is refused", () =>
        Effect.gen(function*() {
          const parent = yield* scratch
          const directory = Path.join(parent, "recovery")
          const sealed = yield* Persistence.makeFileSystem(directory, { secret: "s3cret" })
          yield* sealed.persist(driverRecord(driver(driverId, 1)))
          yield* sealed.persist(workerRecord(worker(workerId)))
          // What the master wrote it reads back.
          assert.deepStrictEqual(
            encodeStored(yield* sealed.readAll),
            encodeStored({ apps: [], drivers: [driver(driverId, 1)], workers: [worker(workerId)] })
          )
          // A planted record: valid JSON of the right shape, written as the master's user, but not sealed.
          const planted = Path.join(directory, `app_${appId}`)
          Fs.writeFileSync(
            planted,
            JSON.stringify(Schema.encodeSync(QueryMessages.ApplicationInfo)(application(appId, 1)))
          )
          const unsealed = yield* untrusted(sealed.readAll)
          assert.strictEqual(unsealed.path, planted)
          assert.match(unsealed.message, /carries no seal of the cluster/)
          // One that another cluster sealed.
          const other = yield* Persistence.makeFileSystem(Path.join(parent, "other"), { secret: "another" })
          yield* other.persist(appRecord(application(appId, 1)))
          Fs.copyFileSync(Path.join(parent, "other", `app_${appId}`), planted)
          assert.match((yield* untrusted(sealed.readAll)).message, /a seal the cluster's secret does not open/)
          // A sealed record copied under another record's name.
          Fs.rmSync(planted)
          Fs.copyFileSync(Path.join(directory, `driver_${driverId}`), Path.join(directory, `driver_${driverId}1`))
          assert.match((yield* untrusted(sealed.readAll)).message, /moved from another name/)
        }))

      it.scopedLive("a record whose id is not the one its name says is not recovered", () =>
        Effect.gen(function*() {
          const { directory, persistence } = yield* engine
          yield* persistence.persist(driverRecord(driver(driverId, 1)))
          Fs.renameSync(Path.join(directory, `driver_${driverId}`), Path.join(directory, "driver_driver-2"))
          const error = yield* Effect.flip(persistence.readAll)
          assert.instanceOf(error, Persistence.PersistenceError)
          assert.match(error.message, /it holds driver "driver-20260101000000-0000"/)
        }))
    })

    it.live("a random sequence of persist/unpersist leaves readAll equal to a Map model", () =>
      Effect.promise(() => {
        const kinds = ["app", "driver", "worker"] as const
        const ids = ["a-1", "a-2", "a/3", "a 4"]
        const operation = fc.oneof(
          fc.record({
            op: fc.constant("persist" as const),
            kind: fc.constantFrom(...kinds),
            id: fc.constantFrom(...ids),
            n: fc.nat({ max: 1000 })
          }),
          fc.record({
            op: fc.constant("unpersist" as const),
            kind: fc.constantFrom(...kinds),
            id: fc.constantFrom(...ids)
          })
        )
        const recordOf = (kind: (typeof kinds)[number], id: string, n: number): MasterCore.Record =>
          kind === "app"
            ? appRecord(application(id, n, `app ${n}`))
            : kind === "driver"
            ? driverRecord(driver(id, n, n))
            : workerRecord(worker(id, n))
        return fc.assert(
          fc.asyncProperty(fc.array(operation, { maxLength: 30 }), (operations) =>
            Effect.gen(function*() {
              const { persistence } = yield* engine
              const model = new Map<string, MasterCore.Record>()
              for (const o of operations) {
                if (o.op === "persist") {
                  const record = recordOf(o.kind, o.id, o.n)
                  yield* persistence.persist(record)
                  model.set(`${o.kind}:${o.id}`, record)
                } else {
                  yield* persistence.unpersist(o.kind, o.id)
                  model.delete(`${o.kind}:${o.id}`)
                }
              }
              const stored = yield* persistence.readAll
              const byId = (a: { id: string }, b: { id: string }) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0
              const expected = (kind: MasterCore.Record["kind"]) =>
                [...model.values()].filter((r) => r.kind === kind).map((r) => r.value).sort(byId).map((value) =>
                  encodeRecord({ kind, value } as MasterCore.Record)
                )
              const actual = encodeStored(stored)
              // Apps and drivers must come out by start time; compared as sets here, order is checked below.
              assert.deepStrictEqual([...actual.apps].sort(byId), expected("app"))
              assert.deepStrictEqual([...actual.drivers].sort(byId), expected("driver"))
              assert.deepStrictEqual([...actual.workers].sort(byId), expected("worker"))
              for (const list of [stored.apps, stored.drivers]) {
                for (let i = 1; i < list.length; i++) assert.isTrue(list[i - 1]!.startTime <= list[i]!.startTime)
              }
            }).pipe(Effect.scoped, Effect.runPromise)),
          { numRuns: 50 }
        )
      }))
  })
})

describe("recovery mode ZOOKEEPER's store, on a real ZooKeeper", () => {
  // An attacker who reaches the ensemble but not the cluster's secret: a session of their own, without credentials
  // (nodes they create are open to anyone, as ZooKeeper's default ACL has it).
  const attacker = (zk: { readonly url: string }) =>
    ZooKeeper.connect({ url: zk.url, sessionTimeoutMillis: 4000, connectTimeoutMillis: 10_000 })

  // A master's store and election on `directory`, joined: what it was told, in order.
  const joined = (zk: { readonly url: string }, directory: string, secret?: string) =>
    Effect.gen(function*() {
      const context = yield* Layer.build(
        ZooKeeperRecovery.layer({
          url: zk.url,
          directory,
          sessionTimeoutMillis: 2000,
          candidate: "kindling://a:7077",
          secret
        })
      )
      const election = Context.get(context, LeaderElection.LeaderElection)
      const persistence = Context.get(context, Persistence.Persistence)
      const events: Array<string> = []
      yield* election.join({
        elected: Effect.sync(() => events.push("elected")),
        revoked: Effect.sync(() => events.push("revoked")),
        untrusted: (error) => Effect.sync(() => events.push(error.message))
      })
      const next = (count: number) =>
        Polling.eventually(Effect.sync(() => [...events]), (seen) => seen.length >= count, { timeout: 20_000 })
      return { election, persistence, events, next }
    })

  it.scopedLive(
    "keeps one znode per record, and writes nothing once this master's election node is gone",
    () =>
      Effect.gen(function*() {
        const zk = yield* zooKeeperServer()
        const directory = "/kindling-test"
        const { election, events, next: until, persistence } = yield* joined(zk, directory)
        yield* until(1)
        assert.isTrue(election.mayLead())

        yield* persistence.persist(workerRecord(worker(workerId)))
        yield* persistence.persist(driverRecord(driver(driverId, 1)))
        yield* persistence.persist(workerRecord(worker(workerId, 8)))
        yield* persistence.unpersist("driver", driverId)
        yield* persistence.unpersist("driver", driverId)
        assert.deepStrictEqual(
          encodeStored(yield* persistence.readAll),
          encodeStored({ apps: [], drivers: [], workers: [worker(workerId, 8)] })
        )

        // Another session deletes this master's election node, as ZooKeeper does when its session expires.
        const other = yield* ZooKeeper.connect({
          url: zk.url,
          sessionTimeoutMillis: 4000,
          connectTimeoutMillis: 10_000
        })
        const [latch] = yield* other.children(`${directory}/leader_election`)
        yield* other.remove(`${directory}/leader_election/${latch}`)
        const refused = yield* Effect.flip(persistence.persist(driverRecord(driver(driverId, 2))))
        assert.strictEqual(refused._tag, "PersistenceError")
        assert.deepStrictEqual(
          [...(yield* other.children(`${directory}/master_status`))],
          [`worker_${encodeURIComponent(workerId)}`]
        )
        // It steps down, and as the only candidate left it is elected again on a node of its own.
        yield* until(3)
        assert.deepStrictEqual(events, ["elected", "revoked", "elected"])
        assert.notInclude(yield* other.children(`${directory}/leader_election`), latch)
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive(
    "with the secret, a directory someone else created first is refused and never taken over",
    () =>
      Effect.gen(function*() {
        const zk = yield* zooKeeperServer()
        const squatter = yield* attacker(zk)
        yield* squatter.ensurePath("/squatted/master_status")
        const planted = new TextEncoder().encode(
          JSON.stringify(Schema.encodeSync(QueryMessages.DriverInfo)(driver(driverId, 1)))
        )
        yield* squatter.commit([{ _tag: "Create", path: `/squatted/master_status/driver_${driverId}`, data: planted }])

        const { election, events, next } = yield* joined(zk, "/squatted", "s3cret")
        const [refusal] = yield* next(1)
        assert.match(
          refusal!,
          /^Refusing the recovery store: \/squatted is not the cluster's: its ACL also lets world:anyone/
        )
        assert.match(refusal!, /kindling\.deploy\.zookeeper\.dir/)
        // It left the election for good: it never leads, and the squatter's ACL is still the squatter's.
        yield* Effect.sleep("2 seconds")
        assert.deepStrictEqual(events, [refusal])
        assert.isFalse(election.mayLead())
        const acl = (yield* squatter.inspect("/squatted")).acl
        assert.deepStrictEqual(acl.map((entry) => `${entry.scheme}:${entry.id}`), ["world:anyone"])
        // Nothing was made inside it.
        assert.isFalse(yield* squatter.exists("/squatted/leader_election"))
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive(
    "with the secret, a record in the cluster's directory that the cluster did not seal stops recovery",
    () =>
      Effect.gen(function*() {
        const zk = yield* zooKeeperServer()
        const { persistence, next } = yield* joined(zk, "/kindling", "s3cret")
        assert.deepStrictEqual(yield* next(1), ["elected"])
        yield* persistence.persist(workerRecord(worker(workerId)))
        // Somebody with the cluster's digest but not its masters' code (or an older Kindling) writes a bare record.
        const insider = yield* ZooKeeper.connect({
          url: zk.url,
          sessionTimeoutMillis: 4000,
          connectTimeoutMillis: 10_000,
          digest: "kindling:s3cret"
        })
        const bare = new TextEncoder().encode(
          JSON.stringify(Schema.encodeSync(QueryMessages.DriverInfo)(driver(driverId, 1)))
        )
        yield* insider.commit([{ _tag: "Create", path: `/kindling/master_status/driver_${driverId}`, data: bare }])
        const error = yield* Effect.flip(persistence.readAll)
        assert.strictEqual(error._tag, "UntrustedStore")
        assert.match(error.message, /driver_driver-20260101000000-0000 carries no seal of the cluster/)
      }),
    Deadlines.scaled(60_000)
  )

  it.scopedLive(
    "a persistent node planted in the election is passed over, with or without the secret",
    () =>
      Effect.gen(function*() {
        const zk = yield* zooKeeperServer()
        // Open directory (no secret): anyone may plant; the latch sorts before any master's.
        const squatter = yield* attacker(zk)
        yield* squatter.ensurePath("/open/leader_election/latch-0000000000")
        yield* squatter.ensurePath("/open/leader_election/not-a-latch")
        const open = yield* joined(zk, "/open")
        assert.deepStrictEqual(yield* open.next(1), ["elected"])
        // With the secret, a persistent latch written with the cluster's digest is no candidate either.
        const insider = yield* ZooKeeper.connect({
          url: zk.url,
          sessionTimeoutMillis: 4000,
          connectTimeoutMillis: 10_000,
          digest: "kindling:s3cret"
        })
        yield* insider.ensurePath("/closed/leader_election/latch-0000000000")
        const closed = yield* joined(zk, "/closed", "s3cret")
        assert.deepStrictEqual(yield* closed.next(1), ["elected"])
        assert.isTrue(closed.election.mayLead())
      }),
    Deadlines.scaled(60_000)
  )
})
