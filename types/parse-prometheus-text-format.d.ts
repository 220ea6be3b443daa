// Types for the Prometheus text parser the metrics tests read scrapes with (the package ships none).
declare module "parse-prometheus-text-format" {
  interface Metric {
    readonly value?: string
    readonly labels?: Readonly<Record<string, string>>
    readonly buckets?: Readonly<Record<string, string>>
    readonly count?: string
    readonly sum?: string
  }
  interface MetricFamily {
    readonly name: string
    readonly help: string
    readonly type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED"
    readonly metrics: ReadonlyArray<Metric>
  }
  export default function parse(text: string): Array<MetricFamily>
}
