/**
 * Paths of files as datasets name them: local paths (resolved against the working directory) and object paths
 * (`s3://bucket/key`), which are joined and cut with `/` and never resolved.
 *
 * @since 0.1.0
 */
import * as Path from "node:path"

/**
 * Whether a path names an object (`s3://`, `s3a://`).
 *
 * @since 0.1.0
 */
export const isObjectPath = (path: string): boolean => /^s3a?:\/\//.test(path)

/**
 * A path made absolute: a local one against the working directory; an object path as it is, without a final
 * `/`.
 *
 * @since 0.1.0
 */
export const resolve = (path: string): string => (isObjectPath(path) ? path.replace(/\/+$/, "") : Path.resolve(path))

/**
 * A path inside a directory.
 *
 * @since 0.1.0
 */
export const join = (dir: string, ...names: ReadonlyArray<string>): string =>
  isObjectPath(dir) ? [dir.replace(/\/+$/, ""), ...names].join("/") : Path.join(dir, ...names)

/**
 * The directory a path is in.
 *
 * @since 0.1.0
 */
export const dirname = (path: string): string =>
  isObjectPath(path) ? path.slice(0, path.lastIndexOf("/")) : Path.dirname(path)

/**
 * The root a path starts from (`/`, or `s3://bucket`) and the names below it.
 *
 * @since 0.1.0
 */
export const segments = (path: string): { readonly root: string; readonly names: Array<string> } => {
  if (isObjectPath(path)) {
    const [scheme, rest] = path.split("://") as [string, string]
    const [bucket = "", ...names] = rest.split("/")
    return { root: `${scheme}://${bucket}`, names: names.filter((name) => name !== "") }
  }
  return { root: Path.sep, names: Path.resolve(path).split(Path.sep).filter((name) => name !== "") }
}
