/**
 * Identifiers of the deploy protocol, as branded strings so that an app id cannot be passed where a driver id
 * is expected. The `make*` constructors produce Spark's formats.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * `worker-<yyyyMMddHHmmss>-<host>-<port>`
 *
 * @since 0.1.0
 * @category models
 */
export const WorkerId = Schema.String.pipe(Schema.brand("WorkerId")).annotations({
  identifier: "WorkerId",
  description: "worker-<yyyyMMddHHmmss>-<host>-<port>"
})
/**
 * @since 0.1.0
 * @category models
 */
export type WorkerId = typeof WorkerId.Type

/**
 * `driver-<yyyyMMddHHmmss>-<NNNN>`
 *
 * @since 0.1.0
 * @category models
 */
export const DriverId = Schema.String.pipe(Schema.brand("DriverId")).annotations({
  identifier: "DriverId",
  description: "driver-<yyyyMMddHHmmss>-<NNNN>"
})
/**
 * @since 0.1.0
 * @category models
 */
export type DriverId = typeof DriverId.Type

/**
 * `app-<yyyyMMddHHmmss>-<NNNN>`
 *
 * @since 0.1.0
 * @category models
 */
export const AppId = Schema.String.pipe(Schema.brand("AppId")).annotations({
  identifier: "AppId",
  description: "app-<yyyyMMddHHmmss>-<NNNN>"
})
/**
 * @since 0.1.0
 * @category models
 */
export type AppId = typeof AppId.Type

/**
 * An executor's id as the driver knows it: the decimal form of its per-app number (`"0"`, `"1"`, …), or
 * `"driver"` for the driver's own in-process executor in local mode.
 *
 * @since 0.1.0
 * @category models
 */
export const ExecutorId = Schema.String.pipe(Schema.brand("ExecutorId")).annotations({
  identifier: "ExecutorId",
  description: "the executor's per-app number in decimal, or \"driver\" in local mode"
})
/**
 * @since 0.1.0
 * @category models
 */
export type ExecutorId = typeof ExecutorId.Type

const pad = (n: number, width: number) => String(n).padStart(width, "0")

/**
 * `yyyyMMddHHmmss` in UTC, the timestamp part of every generated id.
 *
 * @since 0.1.0
 * @category constructors
 */
export const timestamp = (at: Date): string =>
  `${at.getUTCFullYear()}${pad(at.getUTCMonth() + 1, 2)}${pad(at.getUTCDate(), 2)}` +
  `${pad(at.getUTCHours(), 2)}${pad(at.getUTCMinutes(), 2)}${pad(at.getUTCSeconds(), 2)}`

/**
 * The counter is the master's own, starting at 0; it is printed with at least four digits.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeAppId = (at: Date, counter: number): AppId => AppId.make(`app-${timestamp(at)}-${pad(counter, 4)}`)

/**
 * @since 0.1.0
 * @category constructors
 */
export const makeDriverId = (at: Date, counter: number): DriverId =>
  DriverId.make(`driver-${timestamp(at)}-${pad(counter, 4)}`)

/**
 * @since 0.1.0
 * @category constructors
 */
export const makeWorkerId = (at: Date, host: string, port: number): WorkerId =>
  WorkerId.make(`worker-${timestamp(at)}-${host}-${port}`)

/**
 * `"<appId>/<execId>"`, the name under which workers and logs refer to one executor.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fullExecutorId = (appId: AppId, execId: number): string => `${appId}/${execId}`
