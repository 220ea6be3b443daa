// Small helpers shared by the benchmarks.

/** Runs `body` repeatedly for about `millis` and returns operations per second. */
export const throughput = (body: () => void, millis = 1500): number => {
  const batch = 1000
  const started = performance.now()
  let operations = 0
  while (performance.now() - started < millis) {
    for (let i = 0; i < batch; i++) body()
    operations += batch
  }
  return operations / ((performance.now() - started) / 1000)
}

export const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

export const format = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })

export const row = (cells: ReadonlyArray<string>, widths: ReadonlyArray<number>) =>
  cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ")
