/**
 * The body of a task thread: imports the app module once (its exported and registered functions are what named
 * function references name), then runs the tasks it is given one at a time and answers each with its encoded
 * outcome. A task that never ends is dealt with from outside: the thread is terminated.
 *
 * Running this module is the point of importing it, so the package barrel does not re-export it.
 *
 * @since 0.1.0
 */
import { parentPort, workerData } from "node:worker_threads"
import { describeError, Functions, runEncoded } from "./Evaluation.js"
import type { FromThread, ToThread } from "./internal/threadMessages.js"

const port = parentPort!
const { appUrl } = workerData as { readonly appUrl: string | undefined }

// Where `App.register` (in @kindling/driver) keeps functions registered by name; shared through the global
// object because this package must not import the driver's.
const registered = (): Map<string, unknown> | undefined =>
  (globalThis as Record<symbol, Map<string, unknown> | undefined>)[Symbol.for("@kindling/registeredFunctions")]

const post = (message: FromThread, transfer: ReadonlyArray<ArrayBuffer> = []) =>
  port.postMessage(message, transfer as Array<ArrayBuffer>)

const start = async () => {
  let app: Record<string, unknown> = {}
  try {
    if (appUrl !== undefined) app = await import(appUrl) as Record<string, unknown>
  } catch (error) {
    return post({ _tag: "LoadFailed", failure: describeError(error) })
  }
  const functions = new Functions((name) => registered()?.get(name) ?? app[name])
  port.on("message", (message: ToThread) => {
    const outcome = runEncoded(message.task, functions)
    const bytes = outcome.byteOffset === 0 && outcome.byteLength === outcome.buffer.byteLength
      ? outcome
      : outcome.slice()
    post({ _tag: "Done", taskId: message.taskId, outcome: bytes }, [bytes.buffer as ArrayBuffer])
  })
  post({ _tag: "Ready" })
}

void start()
