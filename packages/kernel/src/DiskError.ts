/**
 * The one error of a file operation that failed, wherever a node works on files: an executor's shuffle files,
 * spills, blocks and saved output, a driver's output directory, a worker's work and app directories, a node's
 * scratch directory. It names the operation, the path and the system's code (`ENOENT`, `ENOSPC`, `ENOTDIR`, …).
 *
 * It is tagged (`_tag`) like the `Data.TaggedError`s, so it sits in an Effect's error channel and
 * `Effect.catchTag("DiskError", …)` takes it, but it is a plain `Error` that imports nothing: a task thread,
 * which throws it from its synchronous file operations, loads no `effect` (that would cost every thread some
 * 5 MB of memory). Task threads import it alone, as `@kindling/kernel/DiskError`.
 *
 * @since 0.1.0
 */

/**
 * A file operation that failed, with the system's code for why.
 *
 * @since 0.1.0
 * @category errors
 */
export class DiskError extends Error {
  readonly _tag = "DiskError"
  readonly operation: string
  readonly path: string
  /** `ENOENT`, `ENOSPC`, `EIO`, … */
  readonly code: string
  readonly reason: string

  constructor(fields: {
    readonly operation: string
    readonly path: string
    readonly code: string
    readonly reason: string
  }) {
    super(`${fields.code}: ${fields.reason}, ${fields.operation} '${fields.path}'`)
    this.name = "DiskError"
    this.operation = fields.operation
    this.path = fields.path
    this.code = fields.code
    this.reason = fields.reason
  }
}

// What a system error says: Node's errors carry the system's code, and the path when they name one.
const systemError = (
  u: unknown
): { readonly code: string; readonly message: string; readonly path: unknown } | undefined =>
  u instanceof Error && "code" in u && typeof u.code === "string"
    ? { code: u.code, message: u.message, path: "path" in u ? u.path : undefined }
    : undefined

/**
 * A failure of `operation` on `path` as a `DiskError`: one already is one; Node's errors give their code and,
 * when they name another path (a file deep inside a directory being removed), that path; the platform's
 * `FileSystem` errors are read through the Node error they wrap. Anything without a code is `EIO`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromCause = (operation: string, path: string, cause: unknown): DiskError => {
  if (cause instanceof DiskError) return cause
  const system = systemError(cause) ?? systemError((cause as { readonly cause?: unknown } | undefined)?.cause)
  if (system === undefined) {
    return new DiskError({
      operation,
      path,
      code: "EIO",
      reason: cause instanceof Error ? cause.message : String(cause)
    })
  }
  return new DiskError({
    operation,
    path: typeof system.path === "string" ? system.path : path,
    code: system.code,
    // Node's messages start with the code and end with the system call and the paths it had, if any; the reason
    // is between.
    reason: system.message.replace(/^[A-Z]+: /, "").replace(/, \w+( '[^']*'( -> '[^']*')?)?$/, "")
  })
}
