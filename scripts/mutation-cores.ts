// `pnpm test:mutation:cores [core…] [-- stryker options]`: the mutation runs of the cores whose model tests are too
// slow for `pnpm test:mutation`'s one run (stryker.config.mjs), one core at a time, each mutant judged by that core's
// own test files. Each run's report is kept as test-output/mutation/<core>.json (and its page as <core>.html), and a
// line per mutated module is printed: mutants, killed, survived, score — the figures of docs/mutation.md.
// `pnpm test:mutation:cores master -- --concurrency 1` runs the master's alone, on one core of the machine.
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const reports = Path.join(root, "test-output", "mutation")

interface Core {
  /** The modules mutated. */
  readonly mutate: ReadonlyArray<string>
  /** The test files that judge each mutant. */
  readonly tests: ReadonlyArray<string>
  /**
   * How many histories its model tests try (`MUTATION_RUNS`), where the full count would keep the run going for
   * hours: every surviving mutant runs them whole.
   */
  readonly runs?: number
}

const cores: Record<string, Core> = {
  executor: {
    mutate: ["packages/executor/src/role/ExecutorCore.ts"],
    tests: ["packages/executor/test/ExecutorCore.test.ts"]
  },
  // A core is its entry module and the internals it keeps in its folder.
  dag: {
    mutate: ["packages/driver/src/DagScheduler.ts", "packages/driver/src/internal/dag/*.ts"],
    tests: ["packages/driver/test/DagScheduler.test.ts"]
  },
  driver: {
    mutate: ["packages/driver/src/DriverCore.ts", "packages/driver/src/internal/core/*.ts"],
    tests: ["packages/driver/test/DriverCore.test.ts"],
    runs: 100
  },
  // The master's whole core is well over a thousand mutants, each judged by a model test that takes seconds: its
  // drivers' and its recovery's modules, where its supervision and failover decisions are, stand for it.
  master: {
    mutate: ["packages/master/src/internal/drivers.ts", "packages/master/src/internal/recovery.ts"],
    tests: ["packages/master/test/MasterCore.test.ts"],
    runs: 30
  }
}

const args = process.argv.slice(2)
const dashes = args.indexOf("--")
const names = dashes < 0 ? args : args.slice(0, dashes)
const strykerOptions = dashes < 0 ? [] : args.slice(dashes + 1)
const unknown = names.filter((name) => !(name in cores))
if (unknown.length > 0) {
  console.error(`test:mutation:cores: no core named ${unknown.join(", ")} (known: ${Object.keys(cores).join(", ")})`)
  process.exit(2)
}

interface Report {
  readonly files: Record<string, { readonly mutants: ReadonlyArray<{ readonly status: string }> }>
}

// Stryker's score: the mutants detected (killed, or timed out) among those that could be (not ignored, compiling).
const summary = (report: Report): Array<string> =>
  Object.entries(report.files).map(([file, { mutants }]) => {
    const count = (...statuses: ReadonlyArray<string>) => mutants.filter((m) => statuses.includes(m.status)).length
    const detected = count("Killed", "Timeout")
    const valid = detected + count("Survived", "NoCoverage")
    const score = valid === 0 ? "n/a" : `${(100 * detected / valid).toFixed(1)} %`
    return `${file}: ${valid} mutants, ${detected} killed, ${count("Survived")} survived, ` +
      `${count("NoCoverage")} not reached, score ${score}`
  })

let failed = false
const lines: Array<string> = []
for (const name of names.length === 0 ? Object.keys(cores) : names) {
  const core = cores[name]!
  console.log(`test:mutation:cores: ${name} (${core.mutate.join(", ")})`)
  // Stryker splits --mutate at commas (a glob's braces included).
  const mutate = core.mutate.join(",")
  const run = ChildProcess.spawnSync("pnpm", ["exec", "stryker", "run", "--mutate", mutate, ...strykerOptions], {
    cwd: root,
    stdio: "inherit",
    env: {
      ...process.env,
      MUTATION_TESTS: core.tests.join(","),
      ...(core.runs === undefined ? {} : { MUTATION_RUNS: String(core.runs) })
    }
  })
  if (run.status !== 0) {
    console.error(`test:mutation:cores: the ${name} run failed (${run.status ?? run.signal})`)
    failed = true
    continue
  }
  Fs.copyFileSync(Path.join(reports, "report.json"), Path.join(reports, `${name}.json`))
  Fs.copyFileSync(Path.join(reports, "index.html"), Path.join(reports, `${name}.html`))
  const report = JSON.parse(Fs.readFileSync(Path.join(reports, `${name}.json`), "utf8")) as Report
  lines.push(...summary(report))
}
// Said at the end, where the runs' own output does not bury it.
for (const line of lines) console.log(`test:mutation:cores: ${line}`)
process.exit(failed ? 1 : 0)
