// The configuration of the kindling command: every role's keys in one registry, with Spark's defaults, and the
// reference generated from it.
import { assert, describe, it } from "@effect/vitest"
import { Settings } from "@kindling/cli"
import { Conf, Reference, Source } from "@kindling/conf"
import { DriverConf } from "@kindling/driver"
import { KernelConf, TlsConf } from "@kindling/kernel"
import { MasterConf } from "@kindling/master"
import { HistoryConf } from "@kindling/monitoring"
import { ProtocolConf } from "@kindling/rpc"
import { WorkerConf } from "@kindling/worker"
import { Either } from "effect"
import { readFileSync } from "node:fs"

const resolved = (values: Readonly<Record<string, string>> = {}) =>
  Either.getOrThrow(Conf.resolve(Settings.registry, [{ name: "test", values }]))

describe("the kindling command's configuration", () => {
  it("knows every role's keys", () => {
    assert.deepStrictEqual(Settings.registry.groups.map((group) => group.title), [
      ProtocolConf.group.title,
      MasterConf.group.title,
      WorkerConf.group.title,
      DriverConf.group.title,
      HistoryConf.group.title,
      KernelConf.group.title,
      TlsConf.group.title
    ])
  })

  it("defaults are Spark 3.3's", () => {
    const conf = resolved()
    assert.strictEqual(conf.get(ProtocolConf.keys.workerTimeout), 60_000)
    assert.strictEqual(conf.get(ProtocolConf.keys.networkTimeout), 120_000)
    assert.strictEqual(conf.get(ProtocolConf.keys.rpcMessageMaxSize), 128)
    assert.isFalse(conf.get(ProtocolConf.keys.authenticate))
    assert.strictEqual(conf.get(MasterConf.keys.deadWorkerPersistence), 15)
    assert.strictEqual(conf.get(MasterConf.keys.retainedApplications), 200)
    assert.strictEqual(conf.get(MasterConf.keys.retainedDrivers), 200)
    assert.strictEqual(conf.get(MasterConf.keys.maxExecutorRetries), 10)
    assert.strictEqual(conf.get(MasterConf.keys.defaultCores), Infinity)
    assert.strictEqual(conf.get(MasterConf.keys.recoveryMode), "NONE")
    assert.strictEqual(conf.get(MasterConf.keys.recoveryDirectory), "")
    assert.isTrue(conf.get(MasterConf.keys.spreadOut))
    assert.isFalse(conf.get(MasterConf.keys.restEnabled))
    assert.strictEqual(conf.get(MasterConf.keys.restPort), 6066)
    assert.strictEqual(conf.get(MasterConf.keys.uiPort), 8080)
    assert.strictEqual(conf.get(WorkerConf.keys.uiPort), 8081)
    assert.strictEqual(conf.get(WorkerConf.keys.cleanupInterval), 1_800_000)
    assert.strictEqual(conf.get(WorkerConf.keys.cleanupAppDataTtl), 604_800_000)
    assert.strictEqual(conf.get(WorkerConf.keys.driverTerminateTimeout), 10_000)
    assert.strictEqual(conf.get(DriverConf.keys.driverMemory), 1024)
    assert.strictEqual(conf.get(DriverConf.keys.executorMemory), 1024)
    assert.strictEqual(conf.get(DriverConf.keys.deployMode), "client")
    assert.strictEqual(conf.get(DriverConf.keys.taskMaxFailures), 4)
    assert.isFalse(conf.get(KernelConf.keys.validateState))
  })

  it("leaves optional keys unset", () => {
    const conf = resolved()
    assert.isUndefined(conf.get(DriverConf.keys.executorCores))
    assert.isUndefined(conf.get(DriverConf.keys.coresMax))
    assert.isUndefined(conf.get(DriverConf.keys.master))
    assert.isUndefined(conf.get(DriverConf.keys.appName))
    assert.isUndefined(conf.get(ProtocolConf.keys.authenticateSecret))
  })

  it("falls back where Spark does, across roles", () => {
    assert.strictEqual(resolved().get(MasterConf.keys.recoveryTimeout), 60_000)
    assert.strictEqual(resolved({ "kindling.worker.timeout": "5s" }).get(MasterConf.keys.recoveryTimeout), 5_000)
    const network = resolved({ "kindling.network.timeout": "3s" })
    assert.strictEqual(network.get(ProtocolConf.keys.askTimeout), 3_000)
    // Unlike Spark's, the lookup timeout is short whatever the network timeout: a dead host answers no dial.
    assert.strictEqual(network.get(ProtocolConf.keys.lookupTimeout), 2_000)
    const own = resolved({ "kindling.network.timeout": "3s", "kindling.rpc.askTimeout": "7" })
    assert.strictEqual(own.get(ProtocolConf.keys.askTimeout), 7_000)
  })

  it("every key has its own variable, none of them one the launcher reads itself", () => {
    const variables = Settings.registry.keys.map((key) => key.name.toUpperCase().replace(/\./g, "_"))
    assert.strictEqual(new Set(variables).size, variables.length)
    for (const name of Source.launcherVariables) assert.notInclude(variables, name)
    assert.deepStrictEqual(
      Source.fromEnv(Settings.registry, {
        KINDLING_DEPLOY_RECOVERYMODE: "FILESYSTEM",
        KINDLING_DEAD_WORKER_PERSISTENCE: "3",
        KINDLING_WORKER_EXECUTORSTATESYNC_MAXATTEMPTS: "2",
        KINDLING_MASTER: "kindling://h:7077"
      }).values,
      {
        "kindling.deploy.recoveryMode": "FILESYSTEM",
        "kindling.dead.worker.persistence": "3",
        "kindling.worker.executorStateSync.maxAttempts": "2",
        "kindling.master": "kindling://h:7077"
      }
    )
  })

  it("Spark's names, a missing prefix and the wrong case lead to the Kindling key", () => {
    const suggestionFor = (key: string) => {
      const result = Conf.resolve(Settings.registry, [{ name: "test", values: { [key]: "1" } }])
      const [problem] = Either.isLeft(result) ? result.left.problems : []
      return problem?._tag === "UnknownKey" ? problem.suggestion : undefined
    }
    assert.strictEqual(suggestionFor("spark.deploy.spreadOut"), "kindling.deploy.spreadOut")
    assert.strictEqual(suggestionFor("cores.max"), "kindling.cores.max")
    assert.strictEqual(suggestionFor("kindling.deploy.spreadout"), "kindling.deploy.spreadOut")
    assert.strictEqual(suggestionFor("kindling.worker.timout"), "kindling.worker.timeout")
  })

  describe("docs/configuration.md", () => {
    const markdown = Reference.markdown(Settings.registry)

    it("is up to date (run `pnpm run docs`)", () => {
      const committed = readFileSync(new URL("../../../docs/configuration.md", import.meta.url), "utf8")
      assert.strictEqual(committed, markdown)
    })

    it("lists every key with its type and default, role by role", () => {
      for (const key of Settings.registry.keys) assert.include(markdown, `| \`${key.name}\` |`)
      assert.include(markdown, "| `kindling.worker.timeout` | duration (bare number: s) | `60s` |")
      assert.include(
        markdown,
        "| `kindling.deploy.recoveryTimeout` | duration (bare number: s) | `kindling.worker.timeout` |"
      )
      assert.include(markdown, "| `kindling.deploy.recoveryMode` | `NONE` \\| `FILESYSTEM` \\| `ZOOKEEPER` | `NONE` |")
      for (const group of Settings.registry.groups) assert.include(markdown, `\n## ${group.title}\n`)
    })
  })
})
