/**
 * The body of an object-store thread: it runs the S3 requests of the thread that started it, one at a time, with
 * the AWS SDK, and answers each on its port, waking the caller, which waits on `signal` (a task runs
 * synchronously: see `ObjectStore`). A request that fails answers with the error's name and message.
 *
 * Running this module is the point of importing it, so the package barrel does not re-export it.
 *
 * @since 0.1.0
 */
import { workerData } from "node:worker_threads"
import type { ObjectRequest, ObjectResponse, S3Settings } from "./internal/objectRequests.js"
import { serve } from "./internal/threadCalls.js"

// The SDK warns, once per process, that its releases after January 2027 need Node 22; this one runs on Node 20.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true"

const { settings } = workerData as { readonly settings: S3Settings }

const S3 = await import("@aws-sdk/client-s3")
const client = new S3.S3Client({
  region: settings.region,
  forcePathStyle: settings.pathStyle,
  ...(settings.endpoint === undefined ? {} : { endpoint: settings.endpoint }),
  ...(settings.accessKeyId === undefined || settings.secretAccessKey === undefined ? {} : {
    credentials: {
      accessKeyId: settings.accessKeyId,
      secretAccessKey: settings.secretAccessKey,
      ...(settings.sessionToken === undefined ? {} : { sessionToken: settings.sessionToken })
    }
  }),
  // Checksums only when an operation needs them: S3-compatible stores do not all compute the newer ones.
  requestChecksumCalculation: "WHEN_REQUIRED",
  responseChecksumValidation: "WHEN_REQUIRED",
  maxAttempts: 4
})

const missing = (error: unknown) => {
  const name = (error as { name?: string }).name
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode
  return name === "NotFound" || name === "NoSuchKey" || status === 404
}

const handle = async (request: ObjectRequest): Promise<unknown> => {
  const { bucket } = request
  switch (request._tag) {
    case "Head":
      try {
        const head = await client.send(new S3.HeadObjectCommand({ Bucket: bucket, Key: request.key }))
        return head.ContentLength ?? 0
      } catch (error) {
        if (missing(error)) return undefined
        throw error
      }
    case "List": {
      const keys: Array<{ key: string; size: number }> = []
      const prefixes: Array<string> = []
      let token: string | undefined
      do {
        const page = await client.send(
          new S3.ListObjectsV2Command({
            Bucket: bucket,
            Prefix: request.prefix,
            ...(request.delimiter ? { Delimiter: "/" } : {}),
            ...(token === undefined ? {} : { ContinuationToken: token }),
            ...(request.max === undefined ? {} : { MaxKeys: request.max })
          })
        )
        for (const object of page.Contents ?? []) keys.push({ key: object.Key!, size: object.Size ?? 0 })
        for (const prefix of page.CommonPrefixes ?? []) prefixes.push(prefix.Prefix!)
        token = request.max === undefined && page.IsTruncated === true ? page.NextContinuationToken : undefined
      } while (token !== undefined)
      return { keys, prefixes }
    }
    case "Get": {
      const range = request.range === undefined
        ? {}
        : { Range: `bytes=${request.range.start}-${request.range.start + request.range.length - 1}` }
      try {
        const object = await client.send(new S3.GetObjectCommand({ Bucket: bucket, Key: request.key, ...range }))
        return await object.Body!.transformToByteArray()
      } catch (error) {
        // A range that starts at the end of the object is no error: there are no more bytes.
        if ((error as { name?: string }).name === "InvalidRange") return new Uint8Array(0)
        throw error
      }
    }
    case "Put":
      await client.send(new S3.PutObjectCommand({ Bucket: bucket, Key: request.key, Body: request.bytes }))
      return undefined
    case "StartUpload": {
      const upload = await client.send(new S3.CreateMultipartUploadCommand({ Bucket: bucket, Key: request.key }))
      return upload.UploadId
    }
    case "UploadPart": {
      const part = await client.send(
        new S3.UploadPartCommand({
          Bucket: bucket,
          Key: request.key,
          UploadId: request.uploadId,
          PartNumber: request.partNumber,
          Body: request.bytes
        })
      )
      return part.ETag
    }
    case "CompleteUpload":
      await client.send(
        new S3.CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: request.key,
          UploadId: request.uploadId,
          MultipartUpload: {
            Parts: request.etags.map((etag, i) => ({ PartNumber: i + 1, ETag: etag }))
          }
        })
      )
      return undefined
    case "AbortUpload":
      await client.send(
        new S3.AbortMultipartUploadCommand({ Bucket: bucket, Key: request.key, UploadId: request.uploadId })
      )
      return undefined
    case "Copy":
      await client.send(
        new S3.CopyObjectCommand({
          Bucket: bucket,
          Key: request.to,
          CopySource: `${bucket}/${request.from.split("/").map(encodeURIComponent).join("/")}`
        })
      )
      return undefined
    case "Delete":
      for (let i = 0; i < request.keys.length; i += 1000) {
        await client.send(
          new S3.DeleteObjectsCommand({
            Bucket: bucket,
            Delete: { Objects: request.keys.slice(i, i + 1000).map((key) => ({ Key: key })), Quiet: true }
          })
        )
      }
      return undefined
  }
}

serve<ObjectRequest, ObjectResponse>((request) =>
  handle(request).then(
    (value): ObjectResponse => ({ _tag: "Done", value }),
    (error: unknown): ObjectResponse => ({
      _tag: "Failed",
      name: (error as { name?: string }).name ?? "Error",
      message: (error as { message?: string }).message ?? String(error),
      status: (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode
    })
  )
)
