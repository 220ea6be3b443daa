/**
 * The body of a task thread: it runs the tasks it is given one at a time and answers each with its encoded
 * outcome. The app module is imported the first time a task names one of its functions (exported or registered
 * by name), not before: most tasks carry their functions as source, and importing the app — with `effect` and
 * the driver's package — is most of what it costs to start a thread. A task that never ends is dealt with from
 * outside: the thread is terminated.
 *
 * Running this module is the point of importing it, so the package barrel does not re-export it.
 *
 * @since 0.1.0
 */
import * as Records from "@kindling/protocol/records"
import { parentPort, workerData } from "node:worker_threads"
import type { NewBlock } from "./BlockStore.js"
import { nodeFiles } from "./Disk.js"
import { type Counter, failureOutcome, Functions, namesAppFunction, outcomeOf, type Task } from "./Evaluation.js"
import type { FromThread, ToThread } from "./internal/threadMessages.js"
import * as TaskContext from "./TaskContext.js"

const port = parentPort!
const { appUrl, progress } = workerData as { readonly appUrl: string | undefined; readonly progress: SharedArrayBuffer }

// The records the running task has read, where the pool reads them for heartbeats.
const shared = new Float64Array(progress)
const counter: Counter = {
  get read() {
    return shared[0]!
  },
  set read(value) {
    shared[0] = value
  }
}

// Where `App.register` (in @kindling/app) keeps functions registered by name; shared through the global
// object because this package must not import the app API.
const registered = (): Map<string, unknown> | undefined =>
  (globalThis as Record<symbol, Map<string, unknown> | undefined>)[Symbol.for("@kindling/registeredFunctions")]

const post = (message: FromThread, transfer: ReadonlyArray<ArrayBuffer> = []) =>
  port.postMessage(message, transfer as Array<ArrayBuffer>)

// The app module once imported; a failed import fails every task that needs it, with the import's error.
let app: Promise<Record<string, unknown>> | undefined
let loaded: Record<string, unknown> | undefined
const functions = new Functions((name) => registered()?.get(name) ?? loaded?.[name])

// Whole buffers, so that they can be handed over rather than copied.
const own = (bytes: Uint8Array) =>
  bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice()

const answer = (taskId: number, outcome: Uint8Array, blocks: ReadonlyArray<NewBlock> = []) => {
  const bytes = own(outcome)
  const stored = blocks.map((block) => ({ ...block, bytes: own(block.bytes) }))
  post({ _tag: "Done", taskId, outcome: bytes, stored }, [
    bytes.buffer as ArrayBuffer,
    ...stored.map((block) => block.bytes.buffer as ArrayBuffer)
  ])
}

// What a task sent without inputs reads: the local dir and spill threshold of the last inputs sent.
let plainInputs: TaskContext.Inputs | undefined

const run = async (message: ToThread) => {
  let task: Task
  try {
    task = Records.decode(message.task) as Task
    if (loaded === undefined && appUrl !== undefined && namesAppFunction(task)) {
      app ??= import(appUrl) as Promise<Record<string, unknown>>
      loaded = await app
    }
  } catch (error) {
    return answer(message.taskId, failureOutcome(error))
  }
  counter.read = 0
  if (message.inputs !== undefined) {
    const { localDir, spillThreshold } = message.inputs
    plainInputs = { localDir, spillThreshold, shuffleInputs: [], cached: [] }
  }
  const context = TaskContext.fromInputs(message.inputs ?? plainInputs!, nodeFiles, message.info)
  answer(message.taskId, outcomeOf(task, functions, context, counter), context.stored)
}

// One task at a time, in the order given: a task that waits for the app holds back the ones behind it.
const queue: Array<ToThread> = []
let draining = false
const drain = async () => {
  draining = true
  while (queue.length > 0) await run(queue.shift()!)
  draining = false
}
port.on("message", (message: ToThread) => {
  queue.push(message)
  if (!draining) void drain()
})
post({ _tag: "Ready" })
