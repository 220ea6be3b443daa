/**
 * Where a map task's shuffle output lives in its executor's local dir, and how its blocks are named on the data
 * plane: `shuffle_<shuffleId>_<mapIndex>.data` holds the frames of every reduce partition in order,
 * `….index` the partitions' start offsets (`numReduces + 1` little-endian float64s, the last the file's size).
 * Block `shuffle/<token>/<shuffleId>/<mapIndex>/<reduceId>` is one partition's byte range; the token is the
 * shuffle's, so only the app's own executors, which learned it from their tasks, can name a block.
 *
 * With the worker's shuffle service (`kindling.shuffle.service.enabled`) the worker serves them too, from the
 * executor's directory `<local dir>/<appId>/<executorId>`, as block
 * `shuffle-service/<appId>/<executorId>/<token>/<shuffleId>/<mapIndex>/<reduceId>`: there `shuffle_<shuffleId>.token`
 * holds the shuffle's token, written when the executor first serves the shuffle.
 *
 * @since 0.1.0
 */
import * as Path from "node:path"

/**
 * @since 0.1.0
 */
export const dataFile = (localDir: string, shuffleId: number, mapIndex: number): string =>
  Path.join(localDir, `shuffle_${shuffleId}_${mapIndex}.data`)

/**
 * @since 0.1.0
 */
export const indexFile = (localDir: string, shuffleId: number, mapIndex: number): string =>
  Path.join(localDir, `shuffle_${shuffleId}_${mapIndex}.index`)

/**
 * The file holding a shuffle's token in an executor's directory, for the worker's shuffle service.
 *
 * @since 0.1.0
 */
export const tokenFile = (localDir: string, shuffleId: number): string =>
  Path.join(localDir, `shuffle_${shuffleId}.token`)

/**
 * Whether a file of an executor's directory is one the worker's shuffle service serves (or needs to), and so stays
 * when the executor has exited: map outputs and shuffle tokens, not spills, fetched blocks or cached partitions.
 *
 * @since 0.1.0
 */
export const isServed = (fileName: string): boolean => /^shuffle_\d+(_\d+\.(data|index)|\.token)$/.test(fileName)

/**
 * The prefix every shuffle block id starts with.
 *
 * @since 0.1.0
 */
export const blockPrefix = "shuffle/"

/**
 * @since 0.1.0
 * @category models
 */
export interface BlockName {
  readonly token: string
  readonly shuffleId: number
  readonly mapIndex: number
  readonly reduceId: number
}

/**
 * @since 0.1.0
 */
export const blockId = (name: BlockName): string =>
  `${blockPrefix}${name.token}/${name.shuffleId}/${name.mapIndex}/${name.reduceId}`

/**
 * The parts of a shuffle block id, or `undefined` when it is not one.
 *
 * @since 0.1.0
 */
export const parseBlockId = (id: string): BlockName | undefined => {
  const parts = id.slice(blockPrefix.length).split("/")
  if (!id.startsWith(blockPrefix) || parts.length !== 4) return undefined
  const [token, ...numbers] = parts as [string, string, string, string]
  const [shuffleId, mapIndex, reduceId] = numbers.map(Number) as [number, number, number]
  if (![shuffleId, mapIndex, reduceId].every(Number.isSafeInteger)) return undefined
  return { token, shuffleId, mapIndex, reduceId }
}

/**
 * The prefix of the blocks a worker's shuffle service serves.
 *
 * @since 0.1.0
 */
export const servicePrefix = "shuffle-service/"

/**
 * A map output block as the worker's shuffle service serves it.
 *
 * @since 0.1.0
 */
export const serviceBlockId = (appId: string, executorId: string, name: BlockName): string =>
  `${servicePrefix}${appId}/${executorId}/${blockId(name).slice(blockPrefix.length)}`

/**
 * The app, executor and block of a shuffle service's block id, or `undefined` when it is not one (ids that would
 * name a directory outside the local dir included).
 *
 * @since 0.1.0
 */
export const parseServiceBlockId = (
  id: string
): { readonly appId: string; readonly executorId: string; readonly name: BlockName } | undefined => {
  if (!id.startsWith(servicePrefix)) return undefined
  const [appId = "", executorId = "", ...rest] = id.slice(servicePrefix.length).split("/")
  const name = parseBlockId(`${blockPrefix}${rest.join("/")}`)
  const safe = (part: string) => /^[\w.-]+$/.test(part) && part !== "." && part !== ".."
  return name === undefined || !safe(appId) || !safe(executorId) ? undefined : { appId, executorId, name }
}

/**
 * Where reduce partition `reduceId` is in a data file, from its index's bytes.
 *
 * @since 0.1.0
 */
export const rangeOf = (index: Uint8Array, reduceId: number): { readonly offset: number; readonly length: number } => {
  const view = new DataView(index.buffer, index.byteOffset, index.byteLength)
  if ((reduceId + 2) * 8 > index.byteLength) throw new RangeError(`no reduce partition ${reduceId} in the index`)
  const offset = view.getFloat64(reduceId * 8, true)
  return { offset, length: view.getFloat64((reduceId + 1) * 8, true) - offset }
}
