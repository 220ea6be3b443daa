/**
 * Object storage as files: `s3://bucket/key` paths (and Hadoop's `s3a://`) through S3's API, so that every
 * reader and writer of files — text, CSV, JSON lines, Parquet, checkpoints — works on a bucket as on a disk.
 *
 * A task reads and writes files synchronously (`Disk.Files`), and S3 is an HTTP API: each thread that touches a
 * bucket starts an object-store thread of its own (`objectStoreThread`), which runs the AWS SDK, and waits for
 * each answer on a shared word (`Atomics.wait`) — the thread is blocked as it would be on a disk read. Reads
 * fetch byte ranges, 8 MiB ahead; a file written is uploaded as it grows, in parts of 8 MiB (S3's multipart
 * upload), and appears only once whole, when its writer closes: S3 shows no object before its upload completes.
 * A directory is a key prefix ending in `/`; renaming copies and deletes.
 *
 * Where the store is and who the app is are the `S3Settings` the files are made with (`files(settings)`): a
 * driver reads them from its configuration (`settingsOf`) and its executors from the app's, each with its own
 * process's environment for what the configuration leaves out.
 *
 * @since 0.1.0
 */
import { DiskError } from "@kindling/kernel/DiskError"
import type { Files, Reader, Stat, Writer } from "./Disk.js"
import type { Listing, ObjectRequest, ObjectResponse, S3Settings } from "./internal/objectRequests.js"
import { ThreadCalls } from "./internal/threadCalls.js"

/**
 * @since 0.1.0
 * @category models
 */
export type { S3Settings } from "./internal/objectRequests.js"

// Hadoop's names (after `kindling.hadoop.fs.s3a.`) and AWS's usual variables for each setting.
const names = {
  endpoint: ["endpoint", ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"]],
  region: ["endpoint.region", ["AWS_REGION", "AWS_DEFAULT_REGION"]],
  accessKeyId: ["access.key", ["AWS_ACCESS_KEY_ID"]],
  secretAccessKey: ["secret.key", ["AWS_SECRET_ACCESS_KEY"]],
  sessionToken: ["session.token", ["AWS_SESSION_TOKEN"]],
  pathStyle: ["path.style.access", ["AWS_S3_FORCE_PATH_STYLE"]]
} as const

/**
 * The settings an app's `kindling.hadoop.fs.s3a.*` properties say (`endpoint`, `endpoint.region`, `access.key`,
 * `secret.key`, `session.token`, `path.style.access`, Hadoop's names), each else what AWS's usual variable says
 * in `environment` (`AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
 * `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_S3_FORCE_PATH_STYLE`): the shell that reads a process's
 * configuration hands its environment in. Buckets are addressed in the path by default where an endpoint is
 * given, as S3-compatible stores want.
 *
 * @since 0.1.0
 * @category constructors
 */
export const settingsOf = (
  properties: Readonly<Record<string, string | undefined>>,
  environment: Readonly<Record<string, string | undefined>> = {}
): S3Settings => {
  const setting = (name: keyof typeof names): string | undefined => {
    const [key, variables] = names[name]
    return properties[`kindling.hadoop.fs.s3a.${key}`] ??
      variables.map((variable) => environment[variable]).find((value) => value !== undefined)
  }
  const endpoint = setting("endpoint")
  const pathStyle = setting("pathStyle")
  return {
    endpoint,
    region: setting("region") ?? "us-east-1",
    accessKeyId: setting("accessKeyId"),
    secretAccessKey: setting("secretAccessKey"),
    sessionToken: setting("sessionToken"),
    pathStyle: pathStyle === undefined ? endpoint !== undefined : pathStyle === "true"
  }
}

const location = (path: string): { readonly bucket: string; readonly key: string } => {
  const rest = path.replace(/^s3a?:\/\//, "")
  const slash = rest.indexOf("/")
  return slash < 0 ? { bucket: rest, key: "" } : { bucket: rest.slice(0, slash), key: rest.slice(slash + 1) }
}

// How long a thread waits on one request before it calls the store unreachable; the SDK retries within it.
const requestTimeoutMillis = 120_000
// Bytes a reader fetches at once, and a writer's part size (S3's parts are at least 5 MiB but for the last).
const blockSize = 8 * 1024 * 1024

const codeOf = (response: Extract<ObjectResponse, { _tag: "Failed" }>) =>
  response.status === 404 || response.name === "NoSuchKey" || response.name === "NoSuchBucket"
    ? "ENOENT"
    : response.status === 403 || response.name === "AccessDenied"
    ? "EACCES"
    : "EIO"

// This thread's way to its object-store thread: requests in order, each waited for.
class Bridge {
  private readonly calls: ThreadCalls<ObjectRequest, ObjectResponse>

  constructor(settings: S3Settings) {
    this.calls = new ThreadCalls({
      from: import.meta.url,
      entry: "objectStoreThread",
      workerData: { settings },
      timeoutMillis: requestTimeoutMillis,
      who: "the object store"
    })
  }

  call<A>(operation: string, path: string, request: ObjectRequest, transfer: ReadonlyArray<ArrayBuffer> = []): A {
    const response = this.calls.call(operation, path, request, transfer)
    if (response._tag === "Failed") {
      throw new DiskError({ operation, path, code: codeOf(response), reason: `${response.name}: ${response.message}` })
    }
    return response.value as A
  }
}

// The bridge to an object-store thread, started by the first request.
type Store = () => Bridge

const listing = (store: Store, path: string, prefix: string, delimiter: boolean, max?: number): Listing => {
  const { bucket } = location(path)
  return store().call<Listing>("list", path, {
    _tag: "List",
    bucket,
    prefix,
    delimiter,
    ...(max === undefined ? {} : { max })
  })
}

const asPrefix = (key: string) => (key === "" || key.endsWith("/") ? key : `${key}/`)

const reader = (store: Store, path: string): Reader => {
  const { bucket, key } = location(path)
  let cached: { readonly start: number; readonly bytes: Uint8Array } | undefined
  return {
    read: (buffer, offset, length, position) => {
      if (cached === undefined || position < cached.start || position >= cached.start + cached.bytes.length) {
        const bytes = store().call<Uint8Array>("read", path, {
          _tag: "Get",
          bucket,
          key,
          range: { start: position, length: Math.max(length, blockSize) }
        })
        cached = { start: position, bytes }
        if (bytes.length === 0) return 0
      }
      const from = position - cached.start
      const n = Math.min(length, cached.bytes.length - from)
      buffer.set(cached.bytes.subarray(from, from + n), offset)
      return n
    },
    close: () => {
      cached = undefined
    }
  }
}

// An object written as it grows: one PUT if it stays under a part, else a multipart upload that completes when
// the writer closes — until then no reader sees it.
const writer = (store: Store, path: string): Writer => {
  const { bucket, key } = location(path)
  let pending: Array<Uint8Array> = []
  let pendingBytes = 0
  let written = 0
  let upload: { readonly id: string; readonly etags: Array<string> } | undefined
  const uploadPart = (bytes: Uint8Array) => {
    if (upload === undefined) {
      upload = { id: store().call<string>("write", path, { _tag: "StartUpload", bucket, key }), etags: [] }
    }
    const etag = store().call<string>("write", path, {
      _tag: "UploadPart",
      bucket,
      key,
      uploadId: upload.id,
      partNumber: upload.etags.length + 1,
      bytes
    }, [bytes.buffer as ArrayBuffer])
    upload.etags.push(etag)
  }
  const take = () => {
    const bytes = Buffer.concat(pending, pendingBytes)
    pending = []
    pendingBytes = 0
    // A buffer of its own, handed over to the object-store thread.
    return new Uint8Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
  }
  return {
    write: (bytes, position) => {
      if (position !== written) {
        throw new DiskError({ operation: "write", path, code: "ESPIPE", reason: "an object is written in order" })
      }
      pending.push(Uint8Array.from(bytes))
      pendingBytes += bytes.length
      written += bytes.length
      if (pendingBytes >= blockSize) uploadPart(take())
    },
    close: () => {
      try {
        if (upload === undefined) {
          const bytes = take()
          store().call("write", path, { _tag: "Put", bucket, key, bytes }, [bytes.buffer as ArrayBuffer])
          return
        }
        if (pendingBytes > 0) uploadPart(take())
        store().call("write", path, {
          _tag: "CompleteUpload",
          bucket,
          key,
          uploadId: upload.id,
          etags: upload.etags
        })
      } catch (error) {
        if (upload !== undefined) {
          const { id } = upload
          try {
            store().call("write", path, { _tag: "AbortUpload", bucket, key, uploadId: id })
          } catch {
            // The store's own lifecycle rules remove uploads that are never completed.
          }
        }
        throw error
      }
    }
  }
}

/**
 * Objects as `Files`, in the store `settings` name: what tasks, and the driver, do with `s3://` paths. Each thread
 * that uses them starts an object-store thread of its own, with its first request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const files = (settings: S3Settings): Files => {
  let bridge: Bridge | undefined
  const store: Store = () => (bridge ??= new Bridge(settings))
  const objects: Files = {
    openRead: (path) => {
      if (objects.stat(path)?.kind !== "file") {
        throw new DiskError({ operation: "open", path, code: "ENOENT", reason: "no such object" })
      }
      return reader(store, path)
    },
    openWrite: (path) => writer(store, path),
    readFile: (path) => {
      const { bucket, key } = location(path)
      return store().call<Uint8Array>("read", path, { _tag: "Get", bucket, key })
    },
    writeFile: (path, bytes) => {
      const { bucket, key } = location(path)
      const copy = Uint8Array.from(bytes)
      store().call("write", path, { _tag: "Put", bucket, key, bytes: copy }, [copy.buffer as ArrayBuffer])
    },
    rename: (from, to) => {
      const source = location(from)
      const target = location(to)
      if (source.bucket !== target.bucket) {
        throw new DiskError({ operation: "rename", path: from, code: "EXDEV", reason: `${to} is in another bucket` })
      }
      store().call("rename", from, { _tag: "Copy", bucket: source.bucket, from: source.key, to: target.key })
      store().call("rename", from, { _tag: "Delete", bucket: source.bucket, keys: [source.key] })
    },
    remove: (path) => {
      const { bucket, key } = location(path)
      const under = listing(store, path, asPrefix(key), false).keys.map((object) => object.key)
      const keys = key === "" ? under : [key, ...under]
      if (keys.length > 0) store().call("remove", path, { _tag: "Delete", bucket, keys })
    },
    // A bucket has no directories: a prefix is one as soon as an object is under it.
    makeDirectory: () => undefined,
    stat: (path): Stat | undefined => {
      const { bucket, key } = location(path)
      if (key !== "" && !key.endsWith("/")) {
        const size = store().call<number | undefined>("stat", path, { _tag: "Head", bucket, key })
        if (size !== undefined) return { kind: "file", size }
      }
      const under = listing(store, path, asPrefix(key), false, 1)
      return key === "" || under.keys.length > 0 ? { kind: "directory", size: 0 } : undefined
    },
    list: (path) => {
      const { key } = location(path)
      const prefix = asPrefix(key)
      const found = listing(store, path, prefix, true)
      return [
        ...found.keys.map((object) => object.key.slice(prefix.length)).filter((name) => name !== ""),
        ...found.prefixes.map((dir) => dir.slice(prefix.length, -1))
      ]
    }
  }
  return objects
}
