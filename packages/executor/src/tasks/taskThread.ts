/**
 * The body of a task thread: it runs the tasks it is given one at a time and answers each with its encoded
 * outcome. It imports the app module when a task first needs it, as a JVM loads an app's classes when they are
 * first used: the module registers the functions the tasks call (exported, registered, or hoisted by the bundler)
 * and the classes their records are made of, and its source map lets a task's failure name the user's file and
 * line. A task that needs none of it (`Evaluation.needsAppModule`) runs without it, so a first job that only counts
 * parallelized numbers costs no import — a third of a second of CPU per thread, which an app's first job would
 * otherwise wait for or share its cores with. A task that never ends is dealt with from outside: the thread is
 * terminated.
 *
 * Running this module is the point of importing it, so the package barrel does not re-export it.
 *
 * @since 0.1.0
 */
import { Compression, type Disk, PartFiles, Storage } from "@kindling/data"
import * as Records from "@kindling/protocol/records"
import { parentPort, workerData } from "node:worker_threads"
import {
  type Counter,
  type EncodedOutcome,
  failureOutcome,
  Functions,
  needsAppModule,
  outcomeOf,
  type Task
} from "../engine/Evaluation.js"
import type { NewBlock } from "../shuffle/BlockStore.js"
import * as ThreadControl from "./internal/threadControl.js"
import { type End, endsPerPost, type FromThread, shortTaskMillis, type ToThread } from "./internal/threadMessages.js"
import * as TaskContext from "./TaskContext.js"
import * as ThreadCpu from "./ThreadCpu.js"

const port = parentPort!
const { appUrl, control: controlBuffer, progress } = workerData as {
  readonly appUrl: string | undefined
  readonly progress: SharedArrayBuffer
  readonly control: SharedArrayBuffer
}
// Shared with the pool: the task this thread runs, and those it holds that were stopped before their turn.
const control = new Int32Array(controlBuffer)

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

// Where @kindling/app keeps the functions registered by name (`App.register`) and the factories of hoisted
// ones; shared through the global object because this package must not import the app API.
const appRegistry = (key: string) => (globalThis as Record<symbol, Map<string, unknown> | undefined>)[Symbol.for(key)]

// Stack traces of the app's code name its own files and lines: the bundle carries its source map.
process.setSourceMapsEnabled(true)

const post = (message: FromThread, transfer: ReadonlyArray<ArrayBuffer> = []) =>
  port.postMessage(message, transfer as Array<ArrayBuffer>)

// The app module, once a task has needed it; a failed import fails every task that needs the module, with the
// import's error.
let app: Promise<Record<string, unknown>> | undefined
let loaded: Record<string, unknown> | undefined
const functions = new Functions(
  (name) => appRegistry("@kindling/registeredFunctions")?.get(name) ?? loaded?.[name],
  (id) => appRegistry("@kindling/hoistedFunctions")?.get(id)
)

// Whole buffers, so that they can be handed over rather than copied. (A `Buffer`'s own `slice` is a view, often
// into Node's shared pool: Uint8Array's copies.)
const own = (bytes: Uint8Array) =>
  bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ?
    bytes :
    Uint8Array.prototype.slice.call(bytes)

// The tasks given and not yet taken up, in order.
const queue: Array<ToThread> = []

// Ends not yet told, with the buffers their message hands over (`endsPerPost` says when they go).
let ends: Array<End> = []
let handedOver: Array<ArrayBuffer> = []
const tell = () => {
  if (ends.length === 0) return
  post({ _tag: "Ended", ends }, handedOver)
  ends = []
  handedOver = []
}
const ended = (end: End, short: boolean) => {
  ends.push(end)
  if (!short || ends.length >= endsPerPost || queue.length === 0) tell()
}

const answer = (taskId: number, started: number, outcome: EncodedOutcome, blocks: ReadonlyArray<NewBlock> = []) => {
  const bytes = own(outcome.bytes)
  const stored = blocks.map((block) => ({ ...block, bytes: own(block.bytes) }))
  // A buffer is handed over once, however many of the message's arrays it holds.
  for (const buffer of [bytes.buffer, ...stored.map((block) => block.bytes.buffer)]) {
    if (!handedOver.includes(buffer as ArrayBuffer)) handedOver.push(buffer as ArrayBuffer)
  }
  const runMillis = performance.now() - started
  const { succeeded } = outcome
  ended({ _tag: "Done", taskId, outcome: bytes, succeeded, stored, runMillis }, runMillis < shortTaskMillis)
}

// What a task sent without inputs reads: the local dir, spill threshold and object store of the last inputs sent,
// and the files made with that store's settings (one object-store thread for all the tasks of this thread).
let plainInputs: TaskContext.Inputs | undefined
// (Tasks sent without inputs share one settings object: compared by identity first, by value only when new.)
let files:
  | { readonly store: TaskContext.Inputs["objectStore"]; readonly settings: string; readonly files: Disk.Files }
  | undefined
const filesOf = (inputs: TaskContext.Inputs): Disk.Files => {
  const store = inputs.objectStore
  if (files?.store === store) return files.files
  const settings = JSON.stringify(store)
  files = { store, settings, files: files?.settings === settings ? files.files : Storage.files(store) }
  return files.files
}

const run = async (message: ToThread) => {
  // What later tasks sent without inputs read, kept whether this one runs or not.
  if (message.inputs !== undefined) {
    const { localDir, objectStore, spillThreshold } = message.inputs
    plainInputs = { localDir, spillThreshold, objectStore, shuffleInputs: [], cached: [] }
  }
  if (!ThreadControl.begin(control, message.taskId)) return ended({ _tag: "Skipped", taskId: message.taskId }, true)
  try {
    await evaluate(message)
  } finally {
    ThreadControl.end(control)
  }
}

// The task, once the app module it needs is imported: one whose records are of a class this thread does not know
// yet (the module registers it as it loads) cannot even be decoded before, and the values of broadcast variables
// it reads may be too.
const decoded = async (bytes: Uint8Array, readsBroadcasts: boolean): Promise<Task> => {
  if (loaded !== undefined || appUrl === undefined) return Records.decode(bytes) as Task
  let task: Task | undefined
  try {
    task = Records.decode(bytes) as Task
  } catch (error) {
    if (!(error instanceof Records.UnknownClass)) throw error
  }
  if (task !== undefined && !readsBroadcasts && !needsAppModule(task)) return task
  loaded = await (app ??= import(appUrl) as Promise<Record<string, unknown>>)
  return task ?? Records.decode(bytes) as Task
}

const evaluate = async (message: ToThread) => {
  const started = performance.now()
  let task: Task
  try {
    task = await decoded(message.task, (message.inputs?.broadcasts?.length ?? 0) > 0)
    await Compression.prepare(PartFiles.codecWritten(task.result))
  } catch (error) {
    return answer(message.taskId, started, failureOutcome(error))
  }
  counter.read = 0
  const inputs = message.inputs ?? plainInputs!
  const context = TaskContext.fromInputs(inputs, filesOf(inputs), message.info)
  answer(message.taskId, started, outcomeOf(task, functions, context, counter, ThreadCpu.clock), context.stored)
}

// One task at a time, in the order given: one that waits for the app module holds back the ones behind it.
let draining = false
const drain = async () => {
  draining = true
  while (queue.length > 0) await run(queue.shift()!)
  draining = false
}
port.on("message", (batch: ReadonlyArray<ToThread>) => {
  queue.push(...batch)
  if (!draining) void drain()
})
post({ _tag: "Ready" })
