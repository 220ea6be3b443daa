import type * as Key from "../Key.js"
import { dotted, envName, envPrefix } from "./names.js"

const distance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

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
  let best: Key.Any | undefined
  let bestDistance = Infinity
  for (const candidate of keys) {
    const d = distance(wanted, candidate.name.toLowerCase())
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  if (best === undefined || bestDistance > Math.max(2, Math.floor(wanted.length / 4))) return undefined
  return isEnv ? envName(best.name) : best.name
}
