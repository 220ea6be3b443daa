import { assert, describe, it } from "@effect/vitest"
import { Conf } from "@kindling/protocol"
import { Either } from "effect"
import { readFileSync } from "node:fs"

const resolved = (...sources: ReadonlyArray<Conf.Source>): Conf.Conf => Either.getOrThrow(Conf.resolve(sources))

const refused = (...sources: ReadonlyArray<Conf.Source>): Conf.InvalidConf =>
  Either.getOrThrowWith(Either.flip(Conf.resolve(sources)), () => new Error("the configuration was accepted"))

const valueOf = (key: Conf.Name, raw: string) => resolved({ name: "test", values: { [key]: raw } })

const reasonFor = (key: Conf.Name, raw: string): string => refused({ name: "test", values: { [key]: raw } }).message

describe("Conf", () => {
  describe("defaults", () => {
    it("are Spark 3.3's", () => {
      const conf = resolved()
      assert.strictEqual(conf.workerTimeoutMillis, 60_000)
      assert.strictEqual(conf.deadWorkerPersistence, 15)
      assert.strictEqual(conf.retainedApplications, 200)
      assert.strictEqual(conf.retainedDrivers, 200)
      assert.strictEqual(conf.maxExecutorRetries, 10)
      assert.strictEqual(conf.driverMemoryMiB, 1024)
      assert.strictEqual(conf.executorMemoryMiB, 1024)
      assert.strictEqual(conf.defaultCores, Infinity)
      assert.strictEqual(conf.recoveryMode, "NONE")
      assert.strictEqual(conf.recoveryDirectory, "")
      assert.isTrue(conf.spreadOut)
      assert.isFalse(conf.restEnabled)
      assert.strictEqual(conf.restPort, 6066)
      assert.strictEqual(conf.masterUiPort, 8080)
      assert.strictEqual(conf.workerUiPort, 8081)
      assert.strictEqual(conf.cleanupIntervalMillis, 1_800_000)
      assert.strictEqual(conf.cleanupAppDataTtlMillis, 604_800_000)
      assert.strictEqual(conf.networkTimeoutMillis, 120_000)
      assert.strictEqual(conf.rpcMessageMaxSizeMiB, 128)
      assert.strictEqual(conf.deployMode, "client")
      assert.strictEqual(conf.taskMaxFailures, 4)
    })

    it("leave optional keys unset", () => {
      const conf = resolved()
      assert.isUndefined(conf.executorCores)
      assert.isUndefined(conf.coresMax)
      assert.isUndefined(conf.authenticateSecret)
      assert.isUndefined(conf.master)
      assert.isUndefined(conf.get("kindling.app.name"))
    })

    it("take another key's value where Spark falls back to it", () => {
      assert.strictEqual(resolved().recoveryTimeoutMillis, 60_000)
      assert.strictEqual(valueOf("kindling.worker.timeout", "5s").recoveryTimeoutMillis, 5_000)
      assert.strictEqual(valueOf("kindling.network.timeout", "3s").askTimeoutMillis, 3_000)
      assert.strictEqual(valueOf("kindling.network.timeout", "3s").get("kindling.rpc.lookupTimeout"), "3s")
      const own = resolved({
        name: "test",
        values: { "kindling.network.timeout": "3s", "kindling.rpc.askTimeout": "7" }
      })
      assert.strictEqual(own.askTimeoutMillis, 7_000)
    })

    it("every default is valid for its key and every fallback is a key", () => {
      const names = new Set<string>(Conf.all.map((k) => k.name))
      for (const key of Conf.all) {
        if (key.default !== undefined) assert.isTrue(Either.isRight(key.decode(key.default)), key.name)
        if (key.fallback !== undefined) assert.isTrue(names.has(key.fallback), key.name)
        assert.isTrue(key.name.startsWith("kindling."), key.name)
      }
    })
  })

  describe("precedence", () => {
    const file = Either.getOrThrow(
      Conf.parseProperties(
        "kindling.worker.timeout 10s\nkindling.deploy.spreadOut false\nkindling.deploy.retainedDrivers 3\n" +
          "kindling.cores.max 4\n",
        "conf/kindling-defaults.conf"
      )
    )
    const env = Conf.fromEnv({
      KINDLING_WORKER_TIMEOUT: "20s",
      KINDLING_DEPLOY_RETAINEDDRIVERS: "5",
      KINDLING_HOME: "/opt/kindling",
      PATH: "/bin"
    })
    const flags = Object.fromEntries([Either.getOrThrow(Conf.parseConfFlag("kindling.worker.timeout=30s"))])
    const conf = resolved(
      { name: "conf/kindling-defaults.conf", values: file },
      { name: "environment", values: env },
      { name: "--conf", values: flags }
    )

    it("a later source wins, key by key", () => {
      assert.strictEqual(conf.workerTimeoutMillis, 30_000)
      assert.strictEqual(conf.retainedDrivers, 5)
      assert.isFalse(conf.spreadOut)
      assert.strictEqual(conf.coresMax, 4)
      assert.strictEqual(conf.retainedApplications, 200)
    })

    it("entries say which source set each value", () => {
      const sourceOf = (key: Conf.Name) => conf.entries.find((entry) => entry.key === key)?.source
      assert.strictEqual(sourceOf("kindling.worker.timeout"), "--conf")
      assert.strictEqual(sourceOf("kindling.deploy.retainedDrivers"), "environment")
      assert.strictEqual(sourceOf("kindling.deploy.spreadOut"), "conf/kindling-defaults.conf")
      assert.strictEqual(sourceOf("kindling.deploy.retainedApplications"), "default")
      assert.strictEqual(sourceOf("kindling.deploy.recoveryTimeout"), "--conf, via kindling.worker.timeout")
      assert.isUndefined(sourceOf("kindling.executor.cores"))
      assert.strictEqual(conf.get("kindling.worker.timeout"), "30s")
      assert.strictEqual(conf.get("kindling.deploy.recoveryTimeout"), "30s")
    })

    it("entries redact the secret, get does not", () => {
      const secret = valueOf("kindling.authenticate.secret", "hunter2")
      assert.strictEqual(secret.authenticateSecret, "hunter2")
      assert.strictEqual(secret.get("kindling.authenticate.secret"), "hunter2")
      const entry = secret.entries.find((e) => e.key === "kindling.authenticate.secret")
      assert.notInclude(entry!.value, "hunter2")
    })
  })

  describe("types", () => {
    it("durations: Spark's units, bare numbers in the key's unit, read as milliseconds", () => {
      for (
        const [raw, millis] of [
          ["60s", 60_000],
          ["500ms", 500],
          ["5min", 300_000],
          ["5m", 300_000],
          ["2h", 7_200_000],
          ["1d", 86_400_000],
          ["1500us", 1],
          [" 90S ", 90_000],
          ["45", 45_000]
        ] as const
      ) {
        assert.strictEqual(valueOf("kindling.worker.timeout", raw).workerTimeoutMillis, millis, raw)
      }
      assert.strictEqual(valueOf("kindling.worker.driverTerminateTimeout", "250").driverTerminateTimeoutMillis, 250)
      for (const raw of ["abc", "1.5s", "10 parsecs", "-1s", "", "0s", "999us"]) {
        assert.include(reasonFor("kindling.worker.timeout", raw), `kindling.worker.timeout: ${JSON.stringify(raw)} is`)
      }
      assert.include(reasonFor("kindling.worker.timeout", "abc"), "a bare number is seconds")
      assert.include(reasonFor("kindling.worker.driverTerminateTimeout", "x"), "a bare number is milliseconds")
    })

    it("sizes: Spark's units, bare numbers in MiB, read as whole MiB", () => {
      for (
        const [raw, mebibytes] of [
          ["2g", 2048],
          ["512m", 512],
          ["1024k", 1],
          ["1gb", 1024],
          ["1t", 1_048_576],
          [`${2 ** 20}b`, 1],
          ["3000", 3000],
          ["1536K", 1]
        ] as const
      ) {
        assert.strictEqual(valueOf("kindling.executor.memory", raw).executorMemoryMiB, mebibytes, raw)
      }
      assert.include(reasonFor("kindling.driver.memory", "1.5g"), "not a whole number")
      assert.include(reasonFor("kindling.driver.memory", "lots"), "is not a size")
      assert.include(reasonFor("kindling.driver.memory", "2x"), "is not a size")
      assert.include(reasonFor("kindling.driver.memory", "512k"), "less than 1 MiB")
    })

    it("booleans: true or false, in any case", () => {
      assert.isTrue(valueOf("kindling.master.rest.enabled", "true").restEnabled)
      assert.isTrue(valueOf("kindling.master.rest.enabled", "TRUE").restEnabled)
      assert.isFalse(valueOf("kindling.deploy.spreadOut", "false").spreadOut)
      assert.include(reasonFor("kindling.deploy.spreadOut", "yes"), "\"yes\" is not a boolean")
    })

    it("enums: one of the listed values, in their spelling", () => {
      assert.strictEqual(valueOf("kindling.deploy.recoveryMode", "FILESYSTEM").recoveryMode, "FILESYSTEM")
      assert.strictEqual(valueOf("kindling.deploy.recoveryMode", "filesystem").recoveryMode, "FILESYSTEM")
      assert.strictEqual(valueOf("kindling.submit.deployMode", "cluster").deployMode, "cluster")
      assert.include(reasonFor("kindling.deploy.recoveryMode", "ZOOKEEPER"), "is not one of NONE, FILESYSTEM")
    })

    it("ints: whole numbers within the key's bounds", () => {
      assert.strictEqual(valueOf("kindling.deploy.maxExecutorRetries", "-1").maxExecutorRetries, -1)
      assert.strictEqual(valueOf("kindling.executor.cores", "2").executorCores, 2)
      assert.strictEqual(valueOf("kindling.master.ui.port", "0").masterUiPort, 0)
      assert.include(reasonFor("kindling.executor.cores", "0"), "kindling.executor.cores: 0 is less than 1")
      assert.include(reasonFor("kindling.master.ui.port", "70000"), "70000 is more than 65535")
      assert.include(reasonFor("kindling.dead.worker.persistence", "1.5"), "\"1.5\" is not an integer")
      assert.include(reasonFor("kindling.task.maxFailures", "four"), "\"four\" is not an integer")
    })

    it("cores or infinite", () => {
      assert.strictEqual(valueOf("kindling.deploy.defaultCores", "8").defaultCores, 8)
      assert.strictEqual(valueOf("kindling.deploy.defaultCores", "infinite").defaultCores, Infinity)
      assert.include(reasonFor("kindling.deploy.defaultCores", "0"), "is not a number of cores")
    })

    it("strings are taken as they are", () => {
      assert.strictEqual(valueOf("kindling.app.name", "word count").appName, "word count")
      assert.strictEqual(valueOf("kindling.master", "kindling://h:7077").master, "kindling://h:7077")
    })
  })

  describe("problems", () => {
    it("an unknown key is refused with the nearest known key", () => {
      const error = refused({ name: "--conf", values: { "kindling.worker.timout": "10s" } })
      assert.deepStrictEqual(error.problems, [
        { _tag: "UnknownKey", source: "--conf", key: "kindling.worker.timout", suggestion: "kindling.worker.timeout" }
      ])
      assert.include(
        error.message,
        "--conf: kindling.worker.timout is not a Kindling configuration key (did you mean kindling.worker.timeout?)"
      )
    })

    it("Spark's names, a missing prefix and the wrong case lead to the Kindling key", () => {
      const suggestionFor = (key: string) => {
        const [problem] = refused({ name: "test", values: { [key]: "1" } }).problems
        return problem?._tag === "UnknownKey" ? problem.suggestion : undefined
      }
      assert.strictEqual(suggestionFor("spark.deploy.spreadOut"), "kindling.deploy.spreadOut")
      assert.strictEqual(suggestionFor("cores.max"), "kindling.cores.max")
      assert.strictEqual(suggestionFor("kindling.deploy.spreadout"), "kindling.deploy.spreadOut")
      assert.isUndefined(suggestionFor("kindling.completely.different"))
    })

    it("an ill-typed value in the file names the file and the line", () => {
      const text = "# Kindling\n\nkindling.deploy.spreadOut=false\nkindling.worker.timeout abc\n"
      const error = Either.getOrThrowWith(
        Either.flip(Conf.parseProperties(text, "conf/kindling-defaults.conf")),
        () => new Error("accepted")
      )
      assert.include(
        error.message,
        "conf/kindling-defaults.conf line 4: kindling.worker.timeout: \"abc\" is not a duration"
      )
      assert.strictEqual(error.problems.length, 1)
    })

    it("reports every problem at once", () => {
      const text = "kindling.worker.timeout abc\nkindling.worker.timout 10s\nkindling.deploy.spreadOut maybe\n"
      const error = Either.getOrThrowWith(
        Either.flip(Conf.parseProperties(text, "f.conf")),
        () => new Error("accepted")
      )
      assert.deepStrictEqual(error.problems.map((p) => [p._tag, p.line]), [
        ["InvalidValue", 1],
        ["UnknownKey", 2],
        ["InvalidValue", 3]
      ])
      const across = refused(
        { name: "environment", values: Conf.fromEnv({ KINDLING_WORKER_TIMEOUT: "soon", KINDLING_NOPE: "1" }) },
        { name: "--conf", values: { "kindling.cores.max": "-2" } }
      )
      assert.deepStrictEqual(across.problems.map((p) => `${p.source} ${p._tag}`), [
        "environment InvalidValue",
        "environment UnknownKey",
        "--conf InvalidValue"
      ])
      assert.strictEqual(across.message.split("\n").length, 4)
    })

    it("a --conf without = is refused", () => {
      assert.deepStrictEqual(Conf.parseConfFlag("kindling.cores.max = 4"), Either.right(["kindling.cores.max", "4"]))
      assert.deepStrictEqual(Conf.parseConfFlag("a=b=c"), Either.right(["a", "b=c"]))
      for (const flag of ["kindling.cores.max", "=4"]) {
        const error = Either.getOrThrowWith(Either.flip(Conf.parseConfFlag(flag)), () => new Error("accepted"))
        assert.include(error.message, "--conf: ")
        assert.include(error.message, "is not of the form key=value")
      }
    })
  })

  describe("properties files", () => {
    it("read Spark's format: key value, key=value, comments and blank lines", () => {
      const text = [
        "# comment",
        "! also a comment",
        "",
        "   kindling.worker.timeout    30s   ",
        "kindling.deploy.spreadOut=false",
        "kindling.cores.max = 8",
        "kindling.app.name\tword count",
        "kindling.master: kindling://h:7077\r",
        "kindling.deploy.recoveryDirectory"
      ].join("\n")
      assert.deepStrictEqual(
        Conf.parseProperties(text, "f"),
        Either.right({
          "kindling.worker.timeout": "30s",
          "kindling.deploy.spreadOut": "false",
          "kindling.cores.max": "8",
          "kindling.app.name": "word count",
          "kindling.master": "kindling://h:7077",
          "kindling.deploy.recoveryDirectory": ""
        })
      )
    })
  })

  describe("environment", () => {
    it("maps KINDLING_ variables to keys, camelCase ones case-insensitively", () => {
      assert.deepStrictEqual(
        Conf.fromEnv({
          KINDLING_WORKER_TIMEOUT: "30s",
          KINDLING_DEPLOY_RECOVERYMODE: "FILESYSTEM",
          KINDLING_DEAD_WORKER_PERSISTENCE: "3",
          KINDLING_WORKER_EXECUTORSTATESYNC_MAXATTEMPTS: "2",
          KINDLING_MASTER: "kindling://h:7077",
          KINDLING_CORES_MAX: undefined,
          HOME: "/root",
          _KINDLING_AUTH_SECRET: "s"
        }),
        {
          "kindling.worker.timeout": "30s",
          "kindling.deploy.recoveryMode": "FILESYSTEM",
          "kindling.dead.worker.persistence": "3",
          "kindling.worker.executorStateSync.maxAttempts": "2",
          "kindling.master": "kindling://h:7077"
        }
      )
    })

    it("skips the launcher's own variables", () => {
      const env = Object.fromEntries(Conf.launcherVariables.map((name) => [name, "x"]))
      assert.deepStrictEqual(Conf.fromEnv(env), {})
    })

    it("refuses an unknown KINDLING_ variable, suggesting the variable meant", () => {
      const error = refused({ name: "environment", values: Conf.fromEnv({ KINDLING_DEPLOY_RECOVERY_MODE: "NONE" }) })
      assert.include(
        error.message,
        "environment: KINDLING_DEPLOY_RECOVERY_MODE is not a Kindling configuration variable " +
          "(did you mean KINDLING_DEPLOY_RECOVERYMODE?)"
      )
    })

    it("every key has its own variable", () => {
      const variables = new Set(Conf.all.map((k) => k.name.toUpperCase().replace(/\./g, "_")))
      assert.strictEqual(variables.size, Conf.all.length)
      for (const name of Conf.launcherVariables) {
        assert.isFalse(variables.has(name), name)
      }
    })
  })

  describe("docs/configuration.md", () => {
    it("is up to date (run `pnpm docs`)", () => {
      const committed = readFileSync(new URL("../../../docs/configuration.md", import.meta.url), "utf8")
      assert.strictEqual(committed, Conf.describe())
    })

    it("lists every key with its type and default", () => {
      const markdown = Conf.describe()
      for (const key of Conf.all) assert.include(markdown, `| \`${key.name}\` |`)
      assert.include(markdown, "| `kindling.worker.timeout` | duration (bare number: s) | `60s` |")
      assert.include(
        markdown,
        "| `kindling.deploy.recoveryTimeout` | duration (bare number: s) | `kindling.worker.timeout` |"
      )
      assert.include(markdown, "| `kindling.deploy.recoveryMode` | `NONE` \\| `FILESYSTEM` | `NONE` |")
    })
  })
})
