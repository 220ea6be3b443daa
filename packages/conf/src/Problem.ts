/**
 * What can be wrong with a configuration, and the error that lists all of it at once, each problem with where
 * it was set and, for a misspelt key, the key that was probably meant.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import { envPrefix } from "./internal/names.js"

/**
 * One reason a configuration is refused. `source` names where the value came from (a file, `environment`,
 * `--conf`, …) and `line` the line of a file.
 *
 * @since 0.1.0
 * @category models
 */
export type Problem =
  | {
    readonly _tag: "UnknownKey"
    readonly source: string
    readonly line?: number
    readonly key: string
    readonly suggestion?: string
  }
  | {
    readonly _tag: "InvalidValue"
    readonly source: string
    readonly line?: number
    readonly key: string
    readonly reason: string
  }
  | { readonly _tag: "MalformedEntry"; readonly source: string; readonly line?: number; readonly text: string }
  | { readonly _tag: "UnreadableFile"; readonly source: string; readonly reason: string }
  | { readonly _tag: "MissingValue"; readonly key: string; readonly reason: string }

const format = (problem: Problem): string => {
  if (problem._tag === "MissingValue") return `${problem.key} is not set, but ${problem.reason}`
  if (problem._tag === "UnreadableFile") return `${problem.source} cannot be read: ${problem.reason}`
  const where = problem.line === undefined ? problem.source : `${problem.source} line ${problem.line}`
  switch (problem._tag) {
    case "UnknownKey": {
      const what = problem.key.startsWith(envPrefix) ? "variable" : "key"
      const hint = problem.suggestion === undefined ? "" : ` (did you mean ${problem.suggestion}?)`
      return `${where}: ${problem.key} is not a Kindling configuration ${what}${hint}`
    }
    case "InvalidValue":
      return `${where}: ${problem.key}: ${problem.reason}`
    case "MalformedEntry":
      return `${where}: ${JSON.stringify(problem.text)} is not of the form key=value`
  }
}

/**
 * Every problem of a configuration, in the order of its sources: one on the line that says the configuration is
 * invalid, several each on a line of its own under it.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidConf extends Data.TaggedError("InvalidConf")<{ readonly problems: ReadonlyArray<Problem> }> {
  override get message(): string {
    if (this.problems.length === 1) return `Invalid configuration: ${format(this.problems[0]!)}`
    return ["Invalid configuration:", ...this.problems.map((problem) => `  ${format(problem)}`)].join("\n")
  }
}
