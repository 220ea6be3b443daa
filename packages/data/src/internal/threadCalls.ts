// Synchronous calls answered by a thread of their own: the caller posts a request and waits for the answer on a
// shared word (`Atomics.wait`), at most `timeoutMillis`. What reads a bucket (`ObjectStore`) and what the driver
// does to files on its own thread (`BoundedFiles`) both call this way: the first because S3 is an HTTP API and a
// task is synchronous, the second so that a file system that never answers (a hung mount, a FIFO) costs the
// driver a typed failure after a while, not its thread for ever.
//
// A call that times out leaves its thread stuck where it is: the thread is let go (it keeps nothing alive) and the
// next call starts another, so that an answer that comes late is never taken for the next request's. Node cannot
// end a process while one of its threads is blocked in the system, so a process whose call timed out exits only
// once that call returns — what the call was for has failed long before — and says so as it exits.
//
// Nothing here loads more than Node's own modules: task threads use it.
import { DiskError } from "@kindling/kernel/DiskError"
import { thread } from "@kindling/kernel/ModuleLoading"
import { MessageChannel, type MessagePort, receiveMessageOnPort, type Worker, workerData } from "node:worker_threads"

// The calls that timed out and are still stuck, as `operation 'path'`; said as the process exits.
const stuck = new Set<string>()
let sayingAtExit = false

const sayWhatExitWaitsFor = () => {
  if (stuck.size === 0) return
  process.stderr.write(
    `kindling: the process ends once the system answers ${[...stuck].join(", ")} (Node cannot stop a thread in the ` +
      `middle of a system call)\n`
  )
}

interface Connection {
  readonly worker: Worker
  readonly port: MessagePort
  readonly signal: Int32Array
}

/** A thread started from the module `entry` beside `from` (see `ModuleLoading.thread`), which calls `serve`. */
export class ThreadCalls<Request, Response> {
  private connection: Connection | undefined

  constructor(
    private readonly options: {
      readonly from: string
      readonly entry: string
      readonly workerData?: Record<string, unknown>
      readonly timeoutMillis: number
      /** Who did not answer, for the error: "the object store", "the file system". */
      readonly who: string
    }
  ) {}

  private connect(): Connection {
    if (this.connection !== undefined) return this.connection
    const channel = new MessageChannel()
    const signal = new Int32Array(new SharedArrayBuffer(4))
    const worker = thread(this.options.from, this.options.entry, {
      ...this.options.workerData,
      port: channel.port2,
      signal
    }, { transferList: [channel.port2] })
    // Neither keeps the process alive: a task's thread ends when its work does.
    worker.unref()
    channel.port1.unref()
    return (this.connection = { worker, port: channel.port1, signal })
  }

  /** The thread's answer to `request`; a `DiskError` of `operation` on `path` when it gives none in time. */
  call(operation: string, path: string, request: Request, transfer: ReadonlyArray<ArrayBuffer> = []): Response {
    const { port, signal, worker } = this.connect()
    Atomics.store(signal, 0, 0)
    port.postMessage(request, transfer as Array<ArrayBuffer>)
    const deadline = Date.now() + this.options.timeoutMillis
    while (Atomics.load(signal, 0) === 0) {
      const left = deadline - Date.now()
      if (left <= 0 || Atomics.wait(signal, 0, 0, left) === "timed-out") {
        this.connection = undefined
        port.close()
        const call = `${operation} '${path}'`
        if (!sayingAtExit) process.once("exit", sayWhatExitWaitsFor)
        sayingAtExit = true
        stuck.add(call)
        void worker.terminate().then(() => stuck.delete(call))
        throw new DiskError({
          operation,
          path,
          code: "ETIMEDOUT",
          reason: `${this.options.who} did not answer within ${this.options.timeoutMillis / 1000} s`
        })
      }
    }
    const response = receiveMessageOnPort(port)?.message as Response | undefined
    if (response === undefined) {
      throw new DiskError({ operation, path, code: "EIO", reason: `${this.options.who}'s thread answered nothing` })
    }
    return response
  }
}

// Bytes in a buffer of their own, so that it can be handed over rather than copied (a small one may sit in a
// buffer Node shares between allocations).
const own = (bytes: Uint8Array) =>
  bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice()

/**
 * The thread's side: answers each request with what `handle` gives, one at a time, waking the caller. A response
 * whose `value` is bytes hands them over.
 */
export const serve = <Request, Response extends object>(
  handle: (request: Request) => Promise<Response>
): void => {
  const { port, signal } = workerData as { readonly port: MessagePort; readonly signal: Int32Array }
  const answer = (response: Response) => {
    const value = "value" in response && response.value instanceof Uint8Array ? own(response.value) : undefined
    port.postMessage(
      value === undefined ? response : { ...response, value },
      value === undefined ? [] : [value.buffer as ArrayBuffer]
    )
    Atomics.store(signal, 0, 1)
    Atomics.notify(signal, 0)
  }
  port.on("message", (request: Request) => void handle(request).then(answer))
}
