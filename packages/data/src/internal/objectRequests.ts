// What a thread asks of its object-store thread, and the answers: S3's operations, as `ObjectStore` uses them.

export interface S3Settings {
  /** An S3-compatible store's URL; AWS's own endpoints when absent. */
  readonly endpoint?: string | undefined
  readonly region: string
  readonly accessKeyId?: string | undefined
  readonly secretAccessKey?: string | undefined
  readonly sessionToken?: string | undefined
  /** Buckets in the path (`endpoint/bucket/key`) rather than the host name, as most S3-compatible stores need. */
  readonly pathStyle: boolean
}

export type ObjectRequest =
  | { readonly _tag: "Head"; readonly bucket: string; readonly key: string }
  | {
    readonly _tag: "List"
    readonly bucket: string
    readonly prefix: string
    readonly delimiter: boolean
    readonly max?: number
  }
  | {
    readonly _tag: "Get"
    readonly bucket: string
    readonly key: string
    readonly range?: { readonly start: number; readonly length: number }
  }
  | { readonly _tag: "Put"; readonly bucket: string; readonly key: string; readonly bytes: Uint8Array }
  | { readonly _tag: "StartUpload"; readonly bucket: string; readonly key: string }
  | {
    readonly _tag: "UploadPart"
    readonly bucket: string
    readonly key: string
    readonly uploadId: string
    readonly partNumber: number
    readonly bytes: Uint8Array
  }
  | {
    readonly _tag: "CompleteUpload"
    readonly bucket: string
    readonly key: string
    readonly uploadId: string
    readonly etags: ReadonlyArray<string>
  }
  | { readonly _tag: "AbortUpload"; readonly bucket: string; readonly key: string; readonly uploadId: string }
  | { readonly _tag: "Copy"; readonly bucket: string; readonly from: string; readonly to: string }
  | { readonly _tag: "Delete"; readonly bucket: string; readonly keys: ReadonlyArray<string> }

export type ObjectResponse =
  | { readonly _tag: "Done"; readonly value: unknown }
  | { readonly _tag: "Failed"; readonly name: string; readonly message: string; readonly status?: number | undefined }

export interface Listing {
  readonly keys: ReadonlyArray<{ readonly key: string; readonly size: number }>
  readonly prefixes: ReadonlyArray<string>
}
