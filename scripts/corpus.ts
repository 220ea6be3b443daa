/**
 * A deterministic English-like text for the word-count demo and benchmark: words made of syllables, drawn with
 * Zipf's law (a few very common words, a long tail), in lines of 6 to 17 words. The same size and seed always
 * give the same bytes, so a corpus generated once is kept in the machine's temporary directory and reused.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const syllables = [
  "ka",
  "lo",
  "mi",
  "ne",
  "ru",
  "sa",
  "te",
  "vo",
  "an",
  "el",
  "in",
  "or",
  "us",
  "be",
  "di",
  "fu",
  "go",
  "ha",
  "ji",
  "ko",
  "li",
  "ma",
  "nu",
  "pe",
  "qui",
  "re",
  "si",
  "to",
  "ve",
  "wa",
  "xe",
  "yo",
  "ze",
  "tha",
  "sho",
  "che"
]

// mulberry32: small, fast and the same everywhere.
const generator = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const vocabulary = (size: number, random: () => number): Array<string> => {
  const words = new Set<string>()
  while (words.size < size) {
    const length = 1 + Math.floor(random() * 3.2)
    let word = ""
    for (let i = 0; i < length; i++) word += syllables[Math.floor(random() * syllables.length)]
    words.add(word)
  }
  return [...words]
}

/**
 * Writes `bytes` bytes (give or take a line) of text to `path`.
 */
export const write = (path: string, bytes: number, seed = 42): void => {
  const random = generator(seed)
  const words = vocabulary(30_000, random)
  // Zipf with exponent 1: P(rank r) ∝ 1/r, sampled from the cumulative weights.
  const cumulative = new Float64Array(words.length)
  let total = 0
  for (let r = 0; r < words.length; r++) cumulative[r] = total += 1 / (r + 1)
  const pick = () => {
    const target = random() * total
    let low = 0
    let high = words.length - 1
    while (low < high) {
      const middle = (low + high) >>> 1
      if (cumulative[middle]! < target) low = middle + 1
      else high = middle
    }
    return words[low]!
  }
  const fd = Fs.openSync(path, "w")
  try {
    let written = 0
    while (written < bytes) {
      let chunk = ""
      while (chunk.length < 1 << 20) {
        const length = 6 + Math.floor(random() * 12)
        let line = pick()
        for (let i = 1; i < length; i++) line += " " + pick()
        chunk += line + "\n"
      }
      Fs.writeSync(fd, chunk)
      written += chunk.length
    }
  } finally {
    Fs.closeSync(fd)
  }
}

/**
 * The corpus of about `bytes` bytes, generated into the temporary directory the first time.
 */
export const ensure = (bytes: number, seed = 42): string => {
  const path = Path.join(Os.tmpdir(), `kindling-corpus-${bytes}-${seed}.txt`)
  const ready = `${path}.done`
  if (!Fs.existsSync(ready)) {
    write(path, bytes, seed)
    Fs.writeFileSync(ready, "")
  }
  return path
}
