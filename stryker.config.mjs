// `pnpm test:mutation`: how much of the pure cores' and the format parsers' behaviour their own tests pin down.
// One run mutates the hand-written parsers and the cores whose own tests take under a second, each mutant judged by
// those tests only (vitest.mutation.config.ts), so that it finishes inside an hour on two busy cores. The other
// cores are looked at one at a time, their test file named:
//   MUTATION_TESTS=packages/worker/test/WorkerCore.test.ts pnpm test:mutation --mutate packages/worker/src/WorkerCore.ts
// Their model tests take seconds (MasterCore's and DriverCore's 10-25 s) on a busy machine, and every mutant that
// survives runs them whole: the run of them all, stopped after 7 minutes, was on course for an hour and a half.
// `pnpm test:mutation:cores [core…]` (scripts/mutation-cores.ts) runs the executor's, the DAG scheduler's, the
// driver's and the master's that way, in turn, with fewer model histories (MUTATION_RUNS) where the full count
// would take hours; their scores and the surviving mutants explained are in docs/mutation.md.
/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.mutation.config.ts", related: false },
  // Each mutant runs only the tests that reached its code in the first, unmutated run.
  coverageAnalysis: "perTest",
  // A mutant of a module's top-level constants (a regular expression, a table) is reached by every test, so each
  // would run the whole set: about half the run's time for a twelfth of its mutants. They are left out (counted
  // as ignored), and the tests that reach them are the parsers' own examples.
  ignoreStatic: true,
  mutate: [
    // A core is its entry module and the internals it keeps in its folder (driver/src/internal/tasks).
    "packages/driver/src/{TaskScheduler,ExecutorAllocation,TaskSetId}.ts",
    "packages/driver/src/internal/tasks/*.ts",
    "packages/data/src/{Csv,FieldValues}.ts"
  ],
  // The sandbox each mutant runs in needs the sources and their tests, not the built output or the benches.
  ignorePatterns: ["dist", "bench", "docs", "examples", "test-output", "coverage", "scratchpad"],
  concurrency: 2,
  // The model tests run longer on a loaded machine; a mutant is a timeout only well past its clean run.
  timeoutFactor: 3,
  reporters: ["clear-text", "progress-append-only", "html", "json"],
  htmlReporter: { fileName: "test-output/mutation/index.html" },
  jsonReporter: { fileName: "test-output/mutation/report.json" },
  tempDirName: "test-output/stryker-tmp"
}
