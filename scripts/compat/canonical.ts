// Kindling's records in the canonical form scripts/compat/parquet_types.py prints pyarrow's rows in, so that the
// two compare value by value whatever the types: null; booleans and strings (decimals are text) as they are; an
// integer, a bigint or an integral number, as {int: digits}; any other number as {float: its IEEE-754 bits in hex}
// ("nan" for NaN); bytes as {bytes: hex}; a `Date` as {ms: milliseconds since the epoch}; arrays as arrays and
// objects (structs, maps) as objects.

export type Canonical =
  | null
  | boolean
  | string
  | { readonly int: string }
  | { readonly float: string }
  | { readonly bytes: string }
  | { readonly ms: string }
  | ReadonlyArray<Canonical>
  | { readonly [key: string]: Canonical }

const bits = (value: number) => {
  const view = new DataView(new ArrayBuffer(8))
  view.setFloat64(0, value)
  return view.getBigUint64(0).toString(16).padStart(16, "0")
}

/** A value in canonical form. */
export const canonical = (value: unknown): Canonical => {
  if (value === null || value === undefined) return null
  if (typeof value === "boolean" || typeof value === "string") return value
  if (typeof value === "bigint") return { int: value.toString() }
  if (typeof value === "number") {
    if (Number.isNaN(value)) return { float: "nan" }
    return Number.isInteger(value) && !Object.is(value, -0) ? { int: BigInt(value).toString() } : { float: bits(value) }
  }
  if (value instanceof Uint8Array) return { bytes: Buffer.from(value).toString("hex") }
  if (value instanceof Date) return { ms: String(value.getTime()) }
  if (Array.isArray(value)) return value.map(canonical)
  if (typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, canonical(v)])
    )
  }
  throw new Error(`no canonical form for ${typeof value}`)
}

/** A record in canonical form, as parquet_types.py prints a row: JSON, keys sorted. */
export const canonicalLine = (record: unknown): string => JSON.stringify(canonical(record))
