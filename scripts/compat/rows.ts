// Rows of every field type from a seed, for the checks that write them in every format and read them back
// (`pnpm test:formats-compat`, the object-storage tests): a small generator of its own, so that the apps that
// import it need nothing else. About one value in seven is null.

/** Their fields, as Spark's DDL. */
export const fields =
  "id LONG, name STRING, count INT, score DOUBLE, ok BOOLEAN, price DECIMAL(20,4), day DATE, at TIMESTAMP"

export const rows = (seed: number, n: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state * 1664525 + 1013904223) >>> 0
    return state / 2 ** 32
  }
  const maybe = <A>(make: () => A) => (next() < 0.15 ? null : make())
  // Text that needs quoting in CSV and escaping in JSON, and characters beyond the BMP.
  const pieces = ["a", "B", "\"", ",", " ", "é", "😀", ";", "x y", ""]
  return Array.from({ length: n }, (_, i) => ({
    id: BigInt(i) * 7919n - 2n ** 62n,
    name: maybe(() => Array.from({ length: Math.floor(next() * 6) }, () => pieces[Math.floor(next() * 10)]).join("")),
    count: maybe(() => Math.floor(next() * 2 ** 32) - 2 ** 31),
    score: maybe(() => (next() - 0.5) * 10 ** Math.floor(next() * 12 - 4)),
    ok: maybe(() => next() < 0.5),
    price: maybe(() =>
      `${next() < 0.5 ? "-" : ""}${Math.floor(next() * 1e12)}.${String(Math.floor(next() * 1e4)).padStart(4, "0")}`
    ),
    day: maybe(() => new Date(Math.floor((next() - 0.3) * 40_000) * 86_400_000)),
    at: maybe(() => new Date(Math.floor((next() - 0.3) * 4e12)))
  }))
}

/** Their fields and the two the text formats' checks leave out, for Parquet, which keeps every type. */
export const parquetFields = `${fields}, bytes BINARY, ratio FLOAT`

/** The rows of `rows`, with bytes of every value (text or not) and single-precision numbers. */
export const parquetRows = (seed: number, n: number) => {
  let state = (seed ^ 0x9e3779b9) >>> 0
  const next = () => {
    state = (state * 1664525 + 1013904223) >>> 0
    return state / 2 ** 32
  }
  return rows(seed, n).map((row) => ({
    ...row,
    bytes: next() < 0.15 ? null : Uint8Array.from({ length: Math.floor(next() * 9) }, () => Math.floor(next() * 256)),
    ratio: next() < 0.15 ? null : Math.fround((next() - 0.5) * 10 ** Math.floor(next() * 20 - 10))
  }))
}

/** Rows in the order of their ids. */
export const byId = (a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>) =>
  (a.id as bigint) < (b.id as bigint) ? -1 : 1
