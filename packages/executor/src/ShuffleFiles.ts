/**
 * Where a map task's shuffle output lives in its executor's local dir, and how its blocks are named on the data
 * plane: `shuffle_<shuffleId>_<mapIndex>.data` holds the frames of every reduce partition in order,
 * `….index` the partitions' start offsets (`numReduces + 1` little-endian float64s, the last the file's size).
 * Block `shuffle/<token>/<shuffleId>/<mapIndex>/<reduceId>` is one partition's byte range; the token is the
 * shuffle's, so only the app's own executors, which learned it from their tasks, can name a block.
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
