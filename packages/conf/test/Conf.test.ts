import { assert, describe, it } from "@effect/vitest"
import type { Key } from "@kindling/conf"
import { Conf, type Problem, Registry, Source, ValueType } from "@kindling/conf"
import { Either } from "effect"
import { registry, resources, timing } from "./fixtures/keys.js"

type Keys = Registry.KeyOf<typeof registry>

const resolved = (...sources: ReadonlyArray<Source.Source>): Conf.Conf<Keys> =>
  Either.getOrThrow(Conf.resolve(registry, sources))

const refused = (...sources: ReadonlyArray<Source.Source>): Problem.InvalidConf =>
  Either.getOrThrowWith(Either.flip(Conf.resolve(registry, sources)), () => new Error("the configuration was accepted"))

const valueOf = <K extends Keys>(key: K, raw: string): Key.Value<K> =>
  resolved({ name: "test", values: { [key.name]: raw } }).get(key)

const reasonFor = (key: Keys, raw: string): string => refused({ name: "test", values: { [key.name]: raw } }).message

const entryOf = (conf: Conf.Conf<Keys>, key: Keys) => conf.entries.find((entry) => entry.key === key.name)

describe("Conf", () => {
  describe("defaults", () => {
    it("are the keys' own, typed", () => {
      const conf = resolved()
      assert.strictEqual(conf.get(timing.timeout), 60_000)
      assert.strictEqual(conf.get(timing.pollInterval), 10_000)
      assert.strictEqual(conf.get(resources.memory), 1024)
      assert.strictEqual(conf.get(resources.defaultCores), Infinity)
      assert.strictEqual(conf.get(resources.retries), 10)
      assert.strictEqual(conf.get(resources.uiPort), 8080)
      assert.isTrue(conf.get(resources.spreadOut))
      assert.strictEqual(conf.get(resources.mode), "NONE")
      assert.strictEqual(conf.get(resources.directory), "")
    })

    it("leave optional keys unset", () => {
      const conf = resolved()
      assert.isUndefined(conf.get(resources.cores))
      assert.isUndefined(conf.get(resources.name))
      assert.isUndefined(conf.get(resources.secret))
      assert.isUndefined(entryOf(conf, resources.name))
    })

    it("take another key's value where Spark falls back to it, even one of another group", () => {
      assert.strictEqual(resolved().get(resources.recoveryTimeout), 60_000)
      const fallenBack = resolved({ name: "test", values: { "kindling.example.timeout": "5s" } })
      assert.strictEqual(fallenBack.get(resources.recoveryTimeout), 5_000)
      const own = resolved({
        name: "test",
        values: { "kindling.example.timeout": "3s", "kindling.example.recoveryTimeout": "7" }
      })
      assert.strictEqual(own.get(resources.recoveryTimeout), 7_000)
    })
  })

  describe("precedence", () => {
    const conf = resolved(
      {
        name: "conf/kindling-defaults.conf",
        values: {
          "kindling.example.timeout": "10s",
          "kindling.example.spreadOut": "false",
          "kindling.example.maxRetries": "3",
          "kindling.example.cores": "4"
        }
      },
      { name: "environment", values: { "kindling.example.timeout": "20s", "kindling.example.maxRetries": "5" } },
      { name: "--conf", values: { "kindling.example.timeout": "30s" } }
    )

    it("a later source wins, key by key", () => {
      assert.strictEqual(conf.get(timing.timeout), 30_000)
      assert.strictEqual(conf.get(resources.retries), 5)
      assert.isFalse(conf.get(resources.spreadOut))
      assert.strictEqual(conf.get(resources.cores), 4)
      assert.strictEqual(conf.get(resources.memory), 1024)
    })

    it("entries say which source set each value, in the registry's order", () => {
      const sourceOf = (key: Keys) => entryOf(conf, key)?.source
      assert.strictEqual(sourceOf(timing.timeout), "--conf")
      assert.strictEqual(sourceOf(resources.retries), "environment")
      assert.strictEqual(sourceOf(resources.spreadOut), "conf/kindling-defaults.conf")
      assert.strictEqual(sourceOf(resources.memory), "default")
      assert.strictEqual(sourceOf(resources.recoveryTimeout), "--conf, via kindling.example.timeout")
      assert.isUndefined(sourceOf(resources.name))
      assert.strictEqual(entryOf(conf, timing.timeout)?.value, "30s")
      assert.strictEqual(entryOf(conf, resources.recoveryTimeout)?.value, "30s")
      assert.deepStrictEqual(
        conf.entries.map((entry) => entry.key),
        registry.keys.flatMap((key) => key === resources.name || key === resources.secret ? [] : [key.name])
      )
    })

    it("entries redact the secret, get does not", () => {
      assert.strictEqual(valueOf(resources.secret, "hunter2"), "hunter2")
      const entry = entryOf(
        resolved({ name: "test", values: { "kindling.example.secret": "hunter2" } }),
        resources.secret
      )
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
        assert.strictEqual(valueOf(timing.timeout, raw), millis, raw)
      }
      assert.strictEqual(valueOf(timing.pollInterval, "250"), 250)
      for (const raw of ["abc", "1.5s", "10 parsecs", "-1s", "", "0s", "999us"]) {
        assert.include(reasonFor(timing.timeout, raw), `kindling.example.timeout: ${JSON.stringify(raw)} is`)
      }
      assert.include(reasonFor(timing.timeout, "abc"), "a bare number is seconds")
      assert.include(reasonFor(timing.pollInterval, "x"), "a bare number is milliseconds")
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
        assert.strictEqual(valueOf(resources.memory, raw), mebibytes, raw)
      }
      assert.include(reasonFor(resources.memory, "1.5g"), "not a whole number")
      assert.include(reasonFor(resources.memory, "lots"), "is not a size")
      assert.include(reasonFor(resources.memory, "2x"), "is not a size")
      assert.include(reasonFor(resources.memory, "512k"), "less than 1 MiB")
      assert.deepStrictEqual(ValueType.memory.decode("2g"), Either.right(2048))
    })

    it("booleans: true or false, in any case", () => {
      assert.isTrue(valueOf(resources.spreadOut, "true"))
      assert.isTrue(valueOf(resources.spreadOut, "TRUE"))
      assert.isFalse(valueOf(resources.spreadOut, "false"))
      assert.include(reasonFor(resources.spreadOut, "yes"), "\"yes\" is not a boolean")
    })

    it("literals: one of the listed values, in their spelling", () => {
      assert.strictEqual(valueOf(resources.mode, "FILESYSTEM"), "FILESYSTEM")
      assert.strictEqual(valueOf(resources.mode, "filesystem"), "FILESYSTEM")
      assert.include(reasonFor(resources.mode, "ZOOKEEPER"), "is not one of NONE, FILESYSTEM")
    })

    it("ints: whole numbers within the key's bounds", () => {
      assert.strictEqual(valueOf(resources.retries, "-1"), -1)
      assert.strictEqual(valueOf(resources.cores, "2"), 2)
      assert.strictEqual(valueOf(resources.uiPort, "0"), 0)
      assert.include(reasonFor(resources.cores, "0"), "kindling.example.cores: 0 is less than 1")
      assert.include(reasonFor(resources.uiPort, "70000"), "70000 is more than 65535")
      assert.include(reasonFor(resources.retries, "1.5"), "\"1.5\" is not an integer")
      assert.include(reasonFor(timing.stateSyncAttempts, "four"), "\"four\" is not an integer")
    })

    it("cores or infinite", () => {
      assert.strictEqual(valueOf(resources.defaultCores, "8"), 8)
      assert.strictEqual(valueOf(resources.defaultCores, "infinite"), Infinity)
      assert.include(reasonFor(resources.defaultCores, "0"), "is not a number of cores")
    })

    it("strings are taken as they are", () => {
      assert.strictEqual(valueOf(resources.name, "word count"), "word count")
      assert.strictEqual(valueOf(resources.name, " kindling://h:7077"), " kindling://h:7077")
    })
  })

  describe("problems", () => {
    it("an unknown key is refused with the nearest known key", () => {
      const error = refused({ name: "--conf", values: { "kindling.example.timout": "10s" } })
      assert.deepStrictEqual(error.problems, [
        { _tag: "UnknownKey", source: "--conf", key: "kindling.example.timout", suggestion: "kindling.example.timeout" }
      ])
      assert.include(
        error.message,
        "--conf: kindling.example.timout is not a Kindling configuration key (did you mean kindling.example.timeout?)"
      )
    })

    it("Spark's names, a missing prefix and the wrong case lead to the Kindling key", () => {
      const suggestionFor = (key: string) => {
        const [problem] = refused({ name: "test", values: { [key]: "1" } }).problems
        return problem?._tag === "UnknownKey" ? problem.suggestion : undefined
      }
      assert.strictEqual(suggestionFor("spark.example.spreadOut"), "kindling.example.spreadOut")
      assert.strictEqual(suggestionFor("example.maxRetries"), "kindling.example.maxRetries")
      assert.strictEqual(suggestionFor("kindling.example.spreadout"), "kindling.example.spreadOut")
      assert.isUndefined(suggestionFor("kindling.completely.different"))
    })

    it("an ill-typed value in a file names the file and the line", () => {
      const file = Either.getOrThrow(
        Source.parseProperties(
          "# Kindling\n\nkindling.example.spreadOut=false\nkindling.example.timeout abc\n",
          "conf/kindling-defaults.conf"
        )
      )
      const error = refused(file)
      assert.include(
        error.message,
        "conf/kindling-defaults.conf line 4: kindling.example.timeout: \"abc\" is not a duration"
      )
      assert.strictEqual(error.problems.length, 1)
    })

    it("reports every problem at once", () => {
      const text = "kindling.example.timeout abc\nkindling.example.timout 10s\nkindling.example.spreadOut maybe\n"
      const error = refused(Either.getOrThrow(Source.parseProperties(text, "f.conf")))
      assert.deepStrictEqual(error.problems.map((p) => [p._tag, "line" in p ? p.line : undefined]), [
        ["InvalidValue", 1],
        ["UnknownKey", 2],
        ["InvalidValue", 3]
      ])
      const across = refused(
        Source.fromEnv(registry, { KINDLING_EXAMPLE_TIMEOUT: "soon", KINDLING_NOPE: "1" }),
        { name: "--conf", values: { "kindling.example.cores": "-2" } }
      )
      assert.deepStrictEqual(across.problems.map((p) => `${"source" in p ? p.source : ""} ${p._tag}`), [
        "environment InvalidValue",
        "environment UnknownKey",
        "--conf InvalidValue"
      ])
      assert.strictEqual(across.message.split("\n").length, 4)
    })

    it("an unknown KINDLING_ variable is refused, suggesting the variable meant", () => {
      const error = refused(Source.fromEnv(registry, { KINDLING_EXAMPLE_RECOVERY_MODE: "NONE" }))
      assert.include(
        error.message,
        "environment: KINDLING_EXAMPLE_RECOVERY_MODE is not a Kindling configuration variable " +
          "(did you mean KINDLING_EXAMPLE_RECOVERYMODE?)"
      )
    })
  })

  describe("unknown keys", () => {
    const sources = [
      Source.fromEnv(registry, { KINDLING_OTHER_ROLE_KEY: "1", KINDLING_EXAMPLE_CORES: "3" }),
      { name: "--conf", values: { "kindling.other.key": "x", "kindling.example.spreadOut": "false" } }
    ]

    it("fail by default, as the kindling command that knows every key does", () => {
      const error = Either.getOrThrowWith(Either.flip(Conf.resolve(registry, sources)), () => new Error("accepted"))
      assert.deepStrictEqual(error.problems.map((p) => p._tag), ["UnknownKey", "UnknownKey"])
      assert.isTrue(Either.isLeft(Conf.resolve(registry, sources, { unknownKeys: "fail" })))
    })

    it("are skipped with ignore, as by a process that knows only its role's keys", () => {
      const conf = Either.getOrThrow(Conf.resolve(registry, sources, { unknownKeys: "ignore" }))
      assert.strictEqual(conf.get(resources.cores), 3)
      assert.isFalse(conf.get(resources.spreadOut))
      assert.notInclude(conf.entries.map((entry) => entry.key), "kindling.other.key")
    })

    it("ignore still refuses an ill-typed value of a known key", () => {
      const error = Either.getOrThrowWith(
        Either.flip(
          Conf.resolve(registry, [{
            name: "--conf",
            values: { "kindling.other.key": "x", "kindling.example.cores": "0" }
          }], {
            unknownKeys: "ignore"
          })
        ),
        () => new Error("accepted")
      )
      assert.deepStrictEqual(error.problems.map((p) => p._tag), ["InvalidValue"])
    })
  })

  it("get refuses a key of another registry instead of reading its default", () => {
    const timingOnly = Registry.make(Registry.group({ title: "Timing", description: "", keys: timing }))
    const conf: Conf.Conf<Keys> = Either.getOrThrow(Conf.resolve(timingOnly, [])) as Conf.Conf<Keys>
    assert.strictEqual(conf.get(timing.timeout), 60_000)
    assert.throws(() => conf.get(resources.spreadOut), "kindling.example.spreadOut is not a key of this configuration")
  })
})
