// Line charts as SVG for the scale curves (`pnpm bench curves`): one chart per curve, a line per series, axes
// with their ticks, optionally logarithmic. No dependency: the charts are a few paths and labels.

export interface Series {
  readonly name: string
  readonly points: ReadonlyArray<readonly [number, number]>
}

export interface Chart {
  readonly title: string
  readonly x: { readonly label: string; readonly log?: boolean }
  readonly y: { readonly label: string; readonly log?: boolean }
  readonly series: ReadonlyArray<Series>
  /** A horizontal line drawn across, such as a configured limit. */
  readonly limit?: { readonly label: string; readonly value: number }
}

const width = 720
const height = 420
const margin = { left: 80, right: 190, top: 40, bottom: 56 }
const colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]

const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

const short = (value: number) => {
  const abs = Math.abs(value)
  if (abs >= 1e9) return `${+(value / 1e9).toPrecision(3)}G`
  if (abs >= 1e6) return `${+(value / 1e6).toPrecision(3)}M`
  if (abs >= 1e3) return `${+(value / 1e3).toPrecision(3)}k`
  return `${+value.toPrecision(3)}`
}

// The ticks of an axis over [low, high]: powers of ten on a log axis, round steps on a linear one.
const ticks = (low: number, high: number, log: boolean): Array<number> => {
  if (log) {
    const out: Array<number> = []
    for (let e = Math.floor(Math.log10(low)); e <= Math.ceil(Math.log10(high)); e++) out.push(10 ** e)
    return out
  }
  const step = 10 ** Math.floor(Math.log10((high - low) / 4 || 1))
  const nice = [1, 2, 5, 10].map((m) => m * step).find((s) => (high - low) / s <= 6) ?? 10 * step
  const out: Array<number> = []
  for (let t = Math.ceil(low / nice) * nice; t <= high + nice / 1e6; t += nice) out.push(t)
  return out
}

const range = (values: ReadonlyArray<number>, log: boolean): [number, number] => {
  const positive = log ? values.filter((v) => v > 0) : values
  let low = Math.min(...positive)
  let high = Math.max(...positive)
  if (log) return [10 ** Math.floor(Math.log10(low)), 10 ** Math.ceil(Math.log10(high))]
  low = Math.min(0, low)
  if (high === low) high = low + 1
  return [low, high * 1.08]
}

/** The chart as an SVG document. */
export const svg = (chart: Chart): string => {
  const xs = chart.series.flatMap((s) => s.points.map(([x]) => x))
  const ys = [...chart.series.flatMap((s) => s.points.map(([, y]) => y)), ...(chart.limit ? [chart.limit.value] : [])]
  const xLog = chart.x.log ?? false
  const yLog = chart.y.log ?? false
  const [x0, x1] = range(xs, xLog)
  const [y0, y1] = range(ys, yLog)
  const plotW = width - margin.left - margin.right
  const plotH = height - margin.top - margin.bottom
  const scale = (v: number, a: number, b: number, log: boolean) =>
    log ? (Math.log10(v) - Math.log10(a)) / (Math.log10(b) - Math.log10(a)) : (v - a) / (b - a)
  const px = (x: number) => margin.left + scale(x, x0, x1, xLog) * plotW
  const py = (y: number) => margin.top + (1 - scale(y, y0, y1, yLog)) * plotH
  const parts: Array<string> = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${margin.left}" y="24" font-size="15" font-weight="bold">${escape(chart.title)}</text>`
  ]
  for (const t of ticks(x0, x1, xLog)) {
    parts.push(
      `<line x1="${px(t)}" y1="${margin.top}" x2="${px(t)}" y2="${margin.top + plotH}" stroke="#eee"/>`,
      `<text x="${px(t)}" y="${margin.top + plotH + 16}" text-anchor="middle">${short(t)}</text>`
    )
  }
  for (const t of ticks(y0, y1, yLog)) {
    parts.push(
      `<line x1="${margin.left}" y1="${py(t)}" x2="${margin.left + plotW}" y2="${py(t)}" stroke="#eee"/>`,
      `<text x="${margin.left - 6}" y="${py(t) + 4}" text-anchor="end">${short(t)}</text>`
    )
  }
  parts.push(
    `<rect x="${margin.left}" y="${margin.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#888"/>`,
    `<text x="${margin.left + plotW / 2}" y="${height - 14}" text-anchor="middle">${escape(chart.x.label)}</text>`,
    `<text transform="translate(18 ${margin.top + plotH / 2}) rotate(-90)" text-anchor="middle">${
      escape(chart.y.label)
    }</text>`
  )
  if (chart.limit !== undefined) {
    const y = py(chart.limit.value)
    parts.push(
      `<line x1="${margin.left}" y1="${y}" x2="${
        margin.left + plotW
      }" y2="${y}" stroke="#555" stroke-dasharray="6 4"/>`,
      // Inside the plot, just above its line: to the right it would run into the legend.
      `<text x="${margin.left + 6}" y="${y - 5}" fill="#555">${escape(chart.limit.label)}</text>`
    )
  }
  chart.series.forEach((series, i) => {
    const colour = colours[i % colours.length]
    const points = series.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`)
    parts.push(`<polyline points="${points.join(" ")}" fill="none" stroke="${colour}" stroke-width="2"/>`)
    for (const [x, y] of series.points) {
      parts.push(`<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3.5" fill="${colour}"/>`)
    }
    const legendY = margin.top + 14 + i * 20
    parts.push(
      `<line x1="${margin.left + plotW + 8}" y1="${legendY - 4}" x2="${margin.left + plotW + 28}" y2="${
        legendY - 4
      }" stroke="${colour}" stroke-width="2"/>`,
      `<text x="${margin.left + plotW + 34}" y="${legendY}">${escape(series.name)}</text>`
    )
  })
  parts.push("</svg>\n")
  return parts.join("\n")
}
