/**
 * Where the app called an operation — Spark's call sites: a dataset's is where it was made (`map at logs.ts:40`),
 * a job's where its action was called (`count at logs.ts:42`). They name stages and jobs in the logs, the UI, the
 * monitoring API and the event log. The operation is the Kindling method the app's code called (the last frame of
 * the app API's before the caller's), the place is the caller's frame, named through the bundle's source map.
 *
 * A call site is taken when the operation is called (it costs a stack capture) and read only when a name is
 * needed (formatting a stack through a source map costs more).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import type { UnrunActions } from "./internal/unrunActions.js"
import * as StackFrames from "./StackFrames.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface CallSite {
  /** `count at logs.ts:42`, or undefined when no frame of the app's own code called it. */
  readonly short: string | undefined
  /** The app's frames and those below them, from the one that called the operation. */
  readonly long: string
}

// The app API's own files (`packages/app/src` or `dist` in a checkout; once installed, they are in `node_modules`,
// as effect is): the frames above the caller's. Whoever calls the API — the app, a test, the simulated cluster's
// apps — is the caller.
const api = fileURLToPath(new URL("../", import.meta.url))
const isApi = (file: string): boolean => file.startsWith(api) && /^(src|dist)[/\\]/.test(file.slice(api.length))

const isCaller = (file: string): boolean =>
  Path.isAbsolute(file) && !file.includes(`${Path.sep}node_modules${Path.sep}`) && !isApi(file)

// `Dataset.map`, `Object.parallelize`, `new Dataset`, `async Dataset.count`: the method's own name.
const methodName = (fn: string | undefined): string | undefined =>
  fn?.replace(/^(async|new) /, "").split(".").pop()?.replace(/ \[as .*\]$/, "")

const resolve = (stack: string, fallback: string): CallSite => {
  const frames = stack.split("\n").slice(1).map(StackFrames.parse).filter((frame) => frame !== undefined)
  const first = frames.findIndex((frame) => isCaller(frame.file))
  if (first === -1) return { short: undefined, long: "" }
  const operation = (first > 0 ? methodName(frames[first - 1]!.fn) : undefined) ?? fallback
  const long = frames.slice(first).filter((frame) => !frame.file.startsWith("node:")).map((frame) => frame.text)
  return {
    short: `${operation} at ${Path.basename(frames[first]!.file)}:${frames[first]!.line}`,
    long: long.join("\n")
  }
}

/**
 * The call site of the Kindling operation running now (`fallback` names the operation if the stack does not), read
 * when first asked for.
 *
 * @since 0.1.0
 * @category constructors
 */
export const capture = (fallback: string): () => CallSite => {
  const holder: { stack?: string } = {}
  const limit = Error.stackTraceLimit
  // Enough frames to get past Kindling's own to the app's.
  Error.stackTraceLimit = 40
  Error.captureStackTrace(holder, capture)
  Error.stackTraceLimit = limit
  let site: CallSite | undefined
  return () => site ??= resolve(holder.stack ?? "", fallback)
}

/**
 * The call site of the action whose jobs run now: an action called by another (`first` by way of `take`) keeps the
 * outer one's, the one the app called.
 *
 * @since 0.1.0
 */
export const currentAction: FiberRef.FiberRef<(() => CallSite) | undefined> = FiberRef.unsafeMake<
  (() => CallSite) | undefined
>(undefined)

/**
 * `effect`, the body of the action `name`, with the call site of that action for the jobs it runs. Called when
 * the action is (synchronously, from the app's code), not when its effect runs; `unrun` is told that it was made,
 * and when it starts running.
 *
 * @since 0.1.0
 */
export const action = <A, E, R>(
  name: string,
  effect: Effect.Effect<A, E, R>,
  unrun: UnrunActions
): Effect.Effect<A, E, R> => {
  const site = capture(name)
  const started = unrun.made(site)
  return Effect.zipRight(
    Effect.sync(started),
    Effect.locallyWith(effect, currentAction, (outer) => outer ?? site)
  )
}
