// The log format of examples/latency.ts, in a module of its own, as a port keeps its helpers.
export interface Entry {
  readonly level: "ERROR" | "WARN" | "INFO"
  readonly service: string
  readonly millis: number
}

const fields = (line: string) => line.trim().split(/\s+/)

export const parseLine = (line: string): Entry => {
  const [level, service = "", millis = ""] = fields(line)
  if (level !== "ERROR" && level !== "WARN" && level !== "INFO") throw new Error(`not a log line: ${line}`)
  return { level, service, millis: Number(millis) }
}
