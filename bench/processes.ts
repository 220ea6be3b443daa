// What the benchmarks read of running processes, from /proc.
import * as Fs from "node:fs"

// Direct children of `pid` (the executors of local-cluster are children of the submit process).
export const children = (pid: number): Array<number> =>
  Fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      const stat = Fs.readFileSync(`/proc/${name}/stat`, "utf8")
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid ? [Number(name)] : []
    } catch {
      return []
    }
  })

// Resident memory of a process, in bytes (0 once it is gone).
export const rss = (pid: number): number => {
  try {
    const line = Fs.readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))
    return Number(line?.split(/\s+/)[1] ?? 0) * 1024
  } catch {
    return 0
  }
}
