/**
 * @kindling/data: the data an app reads and writes, as the app API plans it and the executor's engine carries it
 * out — the file formats (text splits, CSV, JSON lines, Parquet) with their field values, parse modes and
 * compression; paths and part files; records' keys and Spark's random generators, which both must agree on; and
 * the storage port (`Disk`) with its adapters: the local file system (`LocalFiles`, and `/NodeDisk` for an
 * executor's event loop), object storage (`ObjectStore`, configured by the settings its shell hands it) and the two
 * by path (`Storage`), bounded for a driver (`BoundedFiles`).
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as BoundedFiles from "./BoundedFiles.js"
/** @since 0.1.0 */
export * as Compression from "./Compression.js"
/** @since 0.1.0 */
export * as Csv from "./Csv.js"
/** @since 0.1.0 */
export * as Disk from "./Disk.js"
/** @since 0.1.0 */
export * as FieldValues from "./FieldValues.js"
/** @since 0.1.0 */
export * as FilePaths from "./FilePaths.js"
/** @since 0.1.0 */
export * as JsonLines from "./JsonLines.js"
/** @since 0.1.0 */
export * as Keys from "./Keys.js"
/** @since 0.1.0 */
export * as LocalFiles from "./LocalFiles.js"
/** @since 0.1.0 */
export * as ObjectStore from "./ObjectStore.js"
/** @since 0.1.0 */
export * as Parquet from "./Parquet.js"
/** @since 0.1.0 */
export * as ParseModes from "./ParseModes.js"
/** @since 0.1.0 */
export * as PartFiles from "./PartFiles.js"
/** @since 0.1.0 */
export * as SparkRandom from "./SparkRandom.js"
/** @since 0.1.0 */
export * as Storage from "./Storage.js"
/** @since 0.1.0 */
export * as TextSplits from "./TextSplits.js"
