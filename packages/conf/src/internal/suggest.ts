import type * as Key from "../Key.js"
import { nearest } from "../Spelling.js"
import { dotted, envName, envPrefix } from "./names.js"

// The nearest known key to an unknown one (or variable, in the same form), if it is near enough to be a slip.
// Compared in the known keys' own spelling, so that Spark's name, a missing prefix, the wrong case and an
// environment variable's underscores cost nothing and only real misspellings count.
export const suggest = (keys: ReadonlyArray<Key.Any>, unknown: string): string | undefined => {
  const isEnv = unknown.startsWith(envPrefix)
  const lower = isEnv ? dotted(unknown) : unknown.toLowerCase()
  const wanted = lower.startsWith("spark.")
    ? `kindling.${lower.slice("spark.".length)}`
    : lower.startsWith("kindling.")
    ? lower
    : `kindling.${lower}`
  const best = nearest(keys.map((key) => key.name), wanted, (name) => name.toLowerCase())
  return best === undefined ? undefined : isEnv ? envName(best) : best
}
