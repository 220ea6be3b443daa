// Word count over a generated 100 MB text: `kindling submit examples/wordcount.ts` (the built CLI, a whole run
// from start to exit) in `local[2]` (one process, two task threads) and on `local-cluster[2,1,2048]` (the master,
// two workers, their two one-core executor processes), next to a plain single-process Node implementation of the
// same job in this process. All write `word<TAB>count` lines sorted by count descending, then word; the outputs
// must be identical. Reports the wall times and their ratios to the plain program (targets ≤ 1.0 in `local[2]`,
// ≤ 1.5 on `local-cluster`), the bytes the cluster's shuffles wrote and read, and the peak resident memory of
// each of its executors.
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Corpus from "../scripts/corpus.js"
import { children, rss } from "./processes.js"
import { format } from "./stats.js"
import { submit } from "./submit.js"

const size = 100 * 1024 * 1024
const work = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-bench-wordcount-"))

// The plain implementation, as fast as one process can do it: the file read in large pieces, its bytes scanned
// once for the whitespace that separates words (the generated corpus is ASCII, where that is what `/\s+/` splits
// on — a non-ASCII byte stops the bench rather than count differently), each word hashed as it is scanned and
// counted in an open-addressing table over the bytes themselves (no string per word), then sorted and written.
const plain = (input: string, output: string) => {
  const slots = 1 << 20 // a power of two, well above the corpus's vocabulary
  const hashes = new Uint32Array(slots)
  const counts = new Uint32Array(slots)
  const starts = new Uint32Array(slots) // where each slot's word is in `words`, and its length
  const lengths = new Uint16Array(slots)
  let words = Buffer.allocUnsafe(1 << 20)
  let wordsEnd = 0
  let distinct = 0
  // Byte by byte: a native compare costs more than these few bytes do.
  const same = (bytes: Buffer, from: number, at: number, length: number) => {
    for (let k = 0; k < length; k++) if (bytes[from + k] !== words[at + k]) return false
    return true
  }
  const count = (bytes: Buffer, from: number, to: number, hash: number) => {
    const length = to - from
    for (let slot = hash & (slots - 1);; slot = (slot + 1) & (slots - 1)) {
      if (counts[slot] === 0) {
        if (++distinct > slots / 2) throw new Error("the vocabulary outgrew the table")
        if (wordsEnd + length > words.length) {
          const grown = Buffer.allocUnsafe(words.length * 2)
          words.copy(grown, 0, 0, wordsEnd)
          words = grown
        }
        bytes.copy(words, wordsEnd, from, to)
        hashes[slot] = hash
        starts[slot] = wordsEnd
        lengths[slot] = length
        counts[slot] = 1
        wordsEnd += length
        return
      }
      if (
        hashes[slot] === hash && lengths[slot] === length && same(bytes, from, starts[slot]!, length)
      ) {
        counts[slot]!++
        return
      }
    }
  }
  const fd = Fs.openSync(input, "r")
  const buffer = Buffer.allocUnsafe(16 * 1024 * 1024)
  let filled = 0
  for (;;) {
    const read = Fs.readSync(fd, buffer, filled, buffer.length - filled, null)
    const end = filled + read
    let start = -1
    let hash = 0
    let scanned = 0
    for (let i = 0; i < end; i++) {
      const byte = buffer[i]!
      if (byte > 0x7f) throw new Error(`the corpus is not ASCII (byte ${byte} at ${i})`)
      if (byte === 32 || (byte >= 9 && byte <= 13)) {
        if (start >= 0) {
          count(buffer, start, i, hash >>> 0)
          start = -1
        }
        scanned = i + 1
      } else {
        if (start < 0) {
          start = i
          hash = 2166136261
        }
        hash = Math.imul(hash ^ byte, 16777619)
      }
    }
    if (read === 0) {
      if (start >= 0) count(buffer, start, end, hash >>> 0)
      break
    }
    // A word cut by the end of the piece is scanned again with the next one.
    filled = end - scanned
    buffer.copy(buffer, 0, scanned, end)
  }
  Fs.closeSync(fd)
  const counted: Array<readonly [string, number]> = []
  for (let slot = 0; slot < slots; slot++) {
    if (counts[slot]! > 0) {
      counted.push([words.toString("latin1", starts[slot], starts[slot]! + lengths[slot]!), counts[slot]!])
    }
  }
  const sorted = counted.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  Fs.writeFileSync(output, sorted.map(([word, count]) => `${word}\t${count}\n`).join(""))
}

interface Run {
  readonly millis: number
  readonly shuffle: ReadonlyArray<number>
  readonly peakRss: Map<number, number>
}

const wordcount = async (master: string, input: string, output: string): Promise<Run> => {
  const peakRss = new Map<number, number>()
  const ran = await submit(master, "bench/apps/wordcount-measured.ts", [input, output], {
    sample: (pid) => {
      for (const child of children(pid)) peakRss.set(child, Math.max(peakRss.get(child) ?? 0, rss(child)))
    }
  })
  const line = ran.stdout.split("\n").find((l) => l.startsWith("shuffle "))
  if (line === undefined) throw new Error(`kindling submit printed no shuffle figures:\n${ran.stdout}`)
  return { millis: ran.millis, shuffle: line.split(" ").slice(1).map(Number), peakRss }
}

const concatenated = (dir: string) =>
  Fs.readdirSync(dir).filter((name) => name.startsWith("part-")).sort()
    .map((name) => Fs.readFileSync(Path.join(dir, name), "utf8")).join("")

const mib = (bytes: number) => `${format(bytes / 2 ** 20, 1)} MiB`

const main = async () => {
  const input = Corpus.ensure(size)
  console.log(`word count over ${mib(Fs.statSync(input).size)} of generated text (${input})\n`)
  const plainOutput = Path.join(work, "plain.txt")
  const plainStarted = performance.now()
  plain(input, plainOutput)
  const plainMillis = performance.now() - plainStarted
  const expected = Fs.readFileSync(plainOutput, "utf8")
  const local = await wordcount("local[2]", input, Path.join(work, "local"))
  const localSame = concatenated(Path.join(work, "local")) === expected
  const run = await wordcount("local-cluster[2,1,2048]", input, Path.join(work, "kindling"))
  const same = localSame && concatenated(Path.join(work, "kindling")) === expected
  const [written, read, remote, spilled] = run.shuffle as [number, number, number, number]
  const executors = [...run.peakRss.values()].sort((a, b) => b - a).slice(0, 2)
  console.log(`single-process Node:                      ${format(plainMillis / 1000, 2)} s`)
  console.log(`kindling submit, local[2]:                ${format(local.millis / 1000, 2)} s (whole run)`)
  console.log(`kindling submit, local-cluster[2,1,2048]: ${format(run.millis / 1000, 2)} s (whole run)`)
  console.log(`outputs identical: ${same ? "yes" : "NO"}`)
  console.log(
    `\nkindling ÷ single process: local[2] ${format(local.millis / plainMillis, 2)} (target ≤ 1.0), ` +
      `local-cluster ${format(run.millis / plainMillis, 2)} (target ≤ 1.5)`
  )
  console.log(`shuffle bytes written ${mib(written)}, read ${mib(read)} (${mib(remote)} from the other executor)`)
  console.log(`spilled: ${mib(spilled)}`)
  console.log(`peak RSS per executor: ${executors.map(mib).join(", ")}`)
  Fs.rmSync(work, { recursive: true, force: true })
  if (!same) process.exit(1)
}

await main()
