// Word count over a generated 100 MB text: `kindling submit --master local-cluster[2,1,2048]
// examples/wordcount.ts` (the built CLI, a whole run from start to exit: the master, two workers, their two
// one-core executor processes) next to a plain single-process Node implementation of the same job in this
// process. Both write `word<TAB>count` lines sorted by count descending, then word; the outputs must be
// identical. Reports both wall times and their ratio (target ≤ 0.6, limit 0.5 on two cores), the bytes the
// shuffles wrote and read, and the peak resident memory of each executor.
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Corpus from "../scripts/corpus.js"
import { children, rss } from "./processes.js"
import { format } from "./stats.js"

const root = fileURLToPath(new URL("../", import.meta.url))
const size = 100 * 1024 * 1024
const work = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kindling-bench-wordcount-"))

// The plain implementation: read the file in large pieces, split into words, count in a Map, sort, write.
const plain = (input: string, output: string) => {
  const counts = new Map<string, number>()
  const fd = Fs.openSync(input, "r")
  const buffer = Buffer.allocUnsafe(16 * 1024 * 1024)
  let carry = ""
  const add = (text: string) => {
    for (const word of text.split(/\s+/)) if (word.length > 0) counts.set(word, (counts.get(word) ?? 0) + 1)
  }
  for (;;) {
    const read = Fs.readSync(fd, buffer, 0, buffer.length, null)
    if (read === 0) break
    const text = carry + buffer.toString("utf8", 0, read)
    const cut = text.lastIndexOf("\n")
    add(text.slice(0, cut + 1))
    carry = text.slice(cut + 1)
  }
  add(carry)
  Fs.closeSync(fd)
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  Fs.writeFileSync(output, sorted.map(([word, count]) => `${word}\t${count}\n`).join(""))
}

interface Run {
  readonly millis: number
  readonly shuffle: ReadonlyArray<number>
  readonly peakRss: Map<number, number>
}

const submit = (input: string, output: string) =>
  new Promise<Run>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(
      process.execPath,
      [
        Path.join(root, "packages/cli/dist/bin.js"),
        "submit",
        "--master",
        "local-cluster[2,1,2048]",
        Path.join(root, "bench/apps/wordcount-measured.ts"),
        input,
        output
      ],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    const peakRss = new Map<number, number>()
    const sampler = setInterval(() => {
      for (const pid of children(child.pid!)) peakRss.set(pid, Math.max(peakRss.get(pid) ?? 0, rss(pid)))
    }, 50)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.once("exit", (code) => {
      const millis = performance.now() - started
      clearInterval(sampler)
      const line = stdout.split("\n").find((l) => l.startsWith("shuffle "))
      if (code !== 0 || line === undefined) {
        return reject(new Error(`kindling submit exited with ${code}:\n${stdout}\n${stderr.slice(-4000)}`))
      }
      resolve({ millis, shuffle: line.split(" ").slice(1).map(Number), peakRss })
    })
  })

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
  const run = await submit(input, Path.join(work, "kindling"))
  const same = concatenated(Path.join(work, "kindling")) === Fs.readFileSync(plainOutput, "utf8")
  const [written, read, remote, spilled] = run.shuffle as [number, number, number, number]
  const executors = [...run.peakRss.values()].sort((a, b) => b - a).slice(0, 2)
  console.log(`single-process Node:                 ${format(plainMillis / 1000, 2)} s`)
  console.log(`kindling submit, local-cluster[2,1,2048]: ${format(run.millis / 1000, 2)} s (whole run)`)
  console.log(`outputs identical: ${same ? "yes" : "NO"}`)
  console.log(`\nkindling ÷ single process: ${format(run.millis / plainMillis, 2)} (target ≤ 0.6, limit 0.5)`)
  console.log(`shuffle bytes written ${mib(written)}, read ${mib(read)} (${mib(remote)} from the other executor)`)
  console.log(`spilled: ${mib(spilled)}`)
  console.log(`peak RSS per executor: ${executors.map(mib).join(", ")}`)
  Fs.rmSync(work, { recursive: true, force: true })
  if (!same) process.exit(1)
}

await main()
