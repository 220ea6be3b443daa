import { assert, describe, it } from "@effect/vitest"
import { type Problem, Source } from "@kindling/conf"
import { Either } from "effect"
import { registry } from "./fixtures/keys.js"

const malformed = (result: Either.Either<Source.Source, Problem.InvalidConf>) =>
  Either.getOrThrowWith(Either.flip(result), () => new Error("accepted"))

describe("Source", () => {
  describe("properties files", () => {
    it("read Spark's format: key value, key=value, comments and blank lines", () => {
      const text = [
        "# comment",
        "! also a comment",
        "",
        "   kindling.example.timeout    30s   ",
        "kindling.example.spreadOut=false",
        "kindling.example.cores = 8",
        "kindling.example.name\tword count",
        "kindling.example.master: kindling://h:7077\r",
        "kindling.example.directory"
      ].join("\n")
      assert.deepStrictEqual(
        Either.map(Source.parseProperties(text, "f"), (source) => source.values),
        Either.right({
          "kindling.example.timeout": "30s",
          "kindling.example.spreadOut": "false",
          "kindling.example.cores": "8",
          "kindling.example.name": "word count",
          "kindling.example.master": "kindling://h:7077",
          "kindling.example.directory": ""
        })
      )
    })

    it("remember the line of each key, the last one for a key set twice", () => {
      const source = Either.getOrThrow(
        Source.parseProperties("kindling.a 1\n\nkindling.b 2\nkindling.a 3\n", "f")
      )
      assert.deepStrictEqual(source, {
        name: "f",
        values: { "kindling.a": "3", "kindling.b": "2" },
        lines: { "kindling.a": 4, "kindling.b": 3 }
      })
    })

    it("refuse every malformed line, with the file and the line", () => {
      const error = malformed(Source.parseProperties("=4\nkindling.a 1\n:x\n", "f.conf"))
      assert.deepStrictEqual(error.problems.map((p) => "line" in p ? p.line : undefined), [1, 3])
      assert.include(error.message, "f.conf line 1: \"=4\" is not of the form key=value")
    })
  })

  describe("--conf", () => {
    it("splits each flag at its first =, a later flag winning", () => {
      assert.deepStrictEqual(
        Source.parseConfFlags(["kindling.example.cores = 4", "a=b=c", "kindling.example.cores=5"]),
        Either.right({ name: "--conf", values: { "kindling.example.cores": "5", a: "b=c" } })
      )
    })

    it("refuses a flag without =, or with nothing before it", () => {
      const error = malformed(Source.parseConfFlags(["kindling.example.cores", "=4", "kindling.example.name=x"]))
      assert.deepStrictEqual(error.problems, [
        { _tag: "MalformedEntry", source: "--conf", text: "kindling.example.cores" },
        { _tag: "MalformedEntry", source: "--conf", text: "=4" }
      ])
      assert.include(error.message, "--conf: \"=4\" is not of the form key=value")
    })
  })

  describe("environment", () => {
    it("maps KINDLING_ variables to keys, camelCase ones case-insensitively", () => {
      assert.deepStrictEqual(
        Source.fromEnv(registry, {
          KINDLING_EXAMPLE_TIMEOUT: "30s",
          KINDLING_EXAMPLE_RECOVERYMODE: "FILESYSTEM",
          KINDLING_EXAMPLE_UI_PORT: "3",
          KINDLING_EXAMPLE_STATESYNC_MAXATTEMPTS: "2",
          KINDLING_EXAMPLE_CORES: undefined,
          HOME: "/root",
          _KINDLING_AUTH_SECRET: "s"
        }),
        {
          name: "environment",
          values: {
            "kindling.example.timeout": "30s",
            "kindling.example.recoveryMode": "FILESYSTEM",
            "kindling.example.ui.port": "3",
            "kindling.example.stateSync.maxAttempts": "2"
          }
        }
      )
    })

    it("keeps an unknown KINDLING_ variable under its own name, for resolving to report", () => {
      assert.deepStrictEqual(Source.fromEnv(registry, { KINDLING_NOPE: "1" }).values, { KINDLING_NOPE: "1" })
    })

    it("skips the launcher's own variables", () => {
      const env = Object.fromEntries(Source.launcherVariables.map((name) => [name, "x"]))
      assert.deepStrictEqual(Source.fromEnv(registry, env).values, {})
    })
  })
})
