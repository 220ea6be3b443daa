/**
 * Slips of the keyboard: the known word an unknown one most likely meant, for the "did you mean" of an unknown
 * configuration key, or of an unknown option on the command line.
 *
 * @since 0.1.0
 */

// Levenshtein's: the fewest insertions, deletions and substitutions that turn one into the other.
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

/**
 * The candidate nearest to `word`, when it is near enough to be a slip: at most 2 edits away, or a quarter of the
 * word's length for a long one. Candidates are compared as `spelled` gives them (say, in lower case).
 *
 * @since 0.1.0
 */
export const nearest = (
  candidates: Iterable<string>,
  word: string,
  spelled: (candidate: string) => string = (candidate) => candidate
): string | undefined => {
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of candidates) {
    const d = distance(word, spelled(candidate))
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return bestDistance <= Math.max(2, Math.floor(word.length / 4)) ? best : undefined
}
