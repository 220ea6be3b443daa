/**
 * What a node's `/metrics/prometheus` serves. Roles record their metrics with Effect's `Metric` API, named
 * `kindling_<role>_…` and tagged with the node they describe (`worker`, `app`); this renders the process's
 * metrics in Prometheus's text exposition format through OpenTelemetry's Prometheus exporter, keeping those of
 * one node (a process may host several: `local` mode, tests).
 *
 * @since 0.1.0
 */
import type { PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import type { MetricProducer } from "@opentelemetry/sdk-metrics"
import * as Effect from "effect/Effect"

/**
 * Which metrics a node serves: those whose name starts with `prefix` and whose tags include `tags`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Selection {
  readonly prefix: string
  readonly tags?: Readonly<Record<string, string>>
}

interface Exporter {
  readonly producer: MetricProducer
  readonly serializer: PrometheusSerializer
}

// Loaded at the first scrape, not with the node: the exporter takes a quarter of a second to import, and most
// processes are never scraped. One producer reads Effect's global metric registry for the whole process.
let exporter: Promise<Exporter> | undefined
const theExporter = () => (exporter ??= (async () => {
  const [Metrics, Resource, Prometheus] = await Promise.all([
    import("@effect/opentelemetry/Metrics"),
    import("@effect/opentelemetry/Resource"),
    import("@opentelemetry/exporter-prometheus")
  ])
  const producer = await Effect.runPromise(
    Metrics.makeProducer.pipe(Effect.provide(Resource.layer({ serviceName: "kindling" })))
  )
  // No `target_info` or `otel_scope_info` series: a scrape shows the node's own metrics only.
  return { producer, serializer: new Prometheus.PrometheusSerializer(undefined, false, undefined, true, true) }
})())

/**
 * The selected metrics, as Prometheus text.
 *
 * @since 0.1.0
 */
export const prometheusText = (selection: Selection): Effect.Effect<string> =>
  Effect.gen(function*() {
    const { producer, serializer } = yield* Effect.promise(theExporter)
    const collected = yield* Effect.promise(() => producer.collect())
    const tags = Object.entries(selection.tags ?? {})
    const { resourceMetrics } = collected
    return serializer.serialize({
      ...resourceMetrics,
      scopeMetrics: resourceMetrics.scopeMetrics.map((scope) => ({
        ...scope,
        metrics: scope.metrics.flatMap((metric) => {
          if (!metric.descriptor.name.startsWith(selection.prefix)) return []
          const dataPoints = (metric.dataPoints as Array<{ attributes: Record<string, unknown> }>).filter((point) =>
            tags.every(([key, value]) => point.attributes[key] === value)
          )
          return dataPoints.length === 0 ? [] : [{ ...metric, dataPoints } as typeof metric]
        })
      }))
    })
  })
