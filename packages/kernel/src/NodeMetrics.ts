/**
 * What a node's `/metrics/prometheus` serves. Roles record their metrics with Effect's `Metric` API, named
 * `kindling_<role>_…` and tagged with the node they describe (`worker`, `app`); this renders the process's
 * metrics in Prometheus's text exposition format through OpenTelemetry's Prometheus exporter, keeping those of
 * one node (a process may host several: `local` mode, tests).
 *
 * @since 0.1.0
 */
import * as Metrics from "@effect/opentelemetry/Metrics"
import * as Resource from "@effect/opentelemetry/Resource"
import { PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
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

let producer: MetricProducer | undefined
// The producer reads Effect's global metric registry; one serves the whole process.
const theProducer = Effect.suspend(() =>
  producer !== undefined ? Effect.succeed(producer) : Metrics.makeProducer.pipe(
    Effect.provide(Resource.layer({ serviceName: "kindling" })),
    Effect.tap((made) => Effect.sync(() => (producer = made)))
  )
)

// No `target_info` or `otel_scope_info` series: a scrape shows the node's own metrics only.
const serializer = new PrometheusSerializer(undefined, false, undefined, true, true)

/**
 * The selected metrics, as Prometheus text.
 *
 * @since 0.1.0
 */
export const prometheusText = (selection: Selection): Effect.Effect<string> =>
  Effect.gen(function*() {
    const metricProducer = yield* theProducer
    const collected = yield* Effect.promise(() => metricProducer.collect())
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
