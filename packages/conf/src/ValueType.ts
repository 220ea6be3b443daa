/**
 * How a configuration value is written and what it is read as: Spark's formats for durations and sizes, bounded
 * integers, booleans, strings and fixed choices. A decoder returns the typed value or why the text is not one, to
 * follow the key's name in a message.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"

/**
 * The unit of a bare number given to a duration.
 *
 * @since 0.1.0
 * @category models
 */
export type TimeUnit = "ms" | "s"

/**
 * What kind of value a key takes, as data, so that the reference can describe it.
 *
 * @since 0.1.0
 * @category models
 */
export type Kind =
  | { readonly _tag: "int"; readonly min: number | undefined; readonly max: number | undefined }
  | { readonly _tag: "number"; readonly min: number; readonly max: number }
  | { readonly _tag: "boolean" }
  | { readonly _tag: "string" }
  | { readonly _tag: "literal"; readonly values: ReadonlyArray<string> }
  | { readonly _tag: "duration"; readonly unit: TimeUnit }
  | { readonly _tag: "memory" }
  | { readonly _tag: "coresOrInfinite" }

/**
 * A kind of value and its decoder, which reads the text of a value as an `A`.
 *
 * @since 0.1.0
 * @category models
 */
export type ValueType<A> = Kind & { readonly decode: (raw: string) => Either.Either<A, string> }

const decodeInt = (raw: string, min: number | undefined, max: number | undefined): Either.Either<number, string> => {
  const text = raw.trim()
  const value = Number(text)
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(value)) {
    return Either.left(`${JSON.stringify(raw)} is not an integer`)
  }
  if (min !== undefined && value < min) return Either.left(`${value} is less than ${min}`)
  if (max !== undefined && value > max) return Either.left(`${value} is more than ${max}`)
  return Either.right(value)
}

/**
 * A whole number, within the bounds when given.
 *
 * @since 0.1.0
 * @category constructors
 */
export const int = (bounds: { readonly min?: number; readonly max?: number } = {}): ValueType<number> => ({
  _tag: "int",
  min: bounds.min,
  max: bounds.max,
  decode: (raw) => decodeInt(raw, bounds.min, bounds.max)
})

/**
 * A decimal number within the bounds (inclusive), as `1.5` or `0.75`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const number = (bounds: { readonly min: number; readonly max: number }): ValueType<number> => ({
  _tag: "number",
  min: bounds.min,
  max: bounds.max,
  decode: (raw) => {
    const text = raw.trim()
    const value = Number(text)
    if (text === "" || !Number.isFinite(value)) return Either.left(`${JSON.stringify(raw)} is not a number`)
    if (value < bounds.min) return Either.left(`${value} is less than ${bounds.min}`)
    if (value > bounds.max) return Either.left(`${value} is more than ${bounds.max}`)
    return Either.right(value)
  }
})

/**
 * A TCP port; 0 asks for any free one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const port: ValueType<number> = int({ min: 0, max: 65535 })

/**
 * `true` or `false`, in any case.
 *
 * @since 0.1.0
 * @category constructors
 */
export const boolean: ValueType<boolean> = {
  _tag: "boolean",
  decode: (raw) => {
    const text = raw.trim().toLowerCase()
    return text === "true" || text === "false"
      ? Either.right(text === "true")
      : Either.left(`${JSON.stringify(raw)} is not a boolean (true or false)`)
  }
}

/**
 * Any text, taken as it is.
 *
 * @since 0.1.0
 * @category constructors
 */
export const string: ValueType<string> = { _tag: "string", decode: Either.right }

/**
 * One of the given values, matched in any case and read in the spelling given here.
 *
 * @since 0.1.0
 * @category constructors
 */
export const literal = <const Values extends ReadonlyArray<string>>(
  ...values: Values
): ValueType<Values[number]> => ({
  _tag: "literal",
  values,
  decode: (raw) => {
    const value = values.find((v) => v.toLowerCase() === raw.trim().toLowerCase())
    return value === undefined
      ? Either.left(`${JSON.stringify(raw)} is not one of ${values.join(", ")}`)
      : Either.right(value)
  }
})

const unitNames: Record<TimeUnit, string> = { ms: "milliseconds", s: "seconds" }

// In microseconds, so that `us` converts exactly and every result is a whole number of milliseconds.
const timeUnits: Record<string, number> = { us: 1, ms: 1e3, s: 1e6, m: 6e7, min: 6e7, h: 3.6e9, d: 8.64e10 }

/**
 * A Spark time string (`60s`, `500ms`, `5min`, `2h`, `1d`) read as milliseconds; a bare number is in `unit`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const duration = (unit: TimeUnit): ValueType<number> => ({
  _tag: "duration",
  unit,
  decode: (raw) => {
    const match = /^(\d+)([a-z]+)?$/.exec(raw.trim().toLowerCase())
    const factor = match === null ? undefined : timeUnits[match[2] ?? unit]
    if (match === null || factor === undefined) {
      return Either.left(
        `${JSON.stringify(raw)} is not a duration (a whole number and us, ms, s, m or min, h, d, as in 60s, 500ms ` +
          `or 5min; a bare number is ${unitNames[unit]})`
      )
    }
    const micros = Number(match[1]) * factor
    if (!Number.isSafeInteger(micros)) return Either.left(`${JSON.stringify(raw)} is too long`)
    const millis = Math.floor(micros / 1e3)
    return millis < 1 ? Either.left(`${JSON.stringify(raw)} is shorter than 1ms`) : Either.right(millis)
  }
})

const byteUnits: Record<string, number> = {
  b: 1,
  k: 2 ** 10,
  kb: 2 ** 10,
  m: 2 ** 20,
  mb: 2 ** 20,
  g: 2 ** 30,
  gb: 2 ** 30,
  t: 2 ** 40,
  tb: 2 ** 40,
  p: 2 ** 50,
  pb: 2 ** 50
}

/**
 * A Spark size string (`2g`, `512m`, `1024k`) read as whole MiB; a bare number is MiB.
 *
 * @since 0.1.0
 * @category constructors
 */
export const memory: ValueType<number> = {
  _tag: "memory",
  decode: (raw) => {
    const text = raw.trim().toLowerCase()
    if (/^\d+\.\d+[a-z]*$/.test(text)) {
      return Either.left(`${JSON.stringify(raw)} is not a whole number (write 1536m, not 1.5g)`)
    }
    const match = /^(\d+)([a-z]+)?$/.exec(text)
    const factor = match === null ? undefined : byteUnits[match[2] ?? "m"]
    if (match === null || factor === undefined) {
      return Either.left(
        `${JSON.stringify(raw)} is not a size (a whole number and b, k, m, g, t or p, as in 512m or 2g; a bare ` +
          "number is MiB)"
      )
    }
    const bytes = Number(match[1]) * factor
    if (!Number.isSafeInteger(bytes)) return Either.left(`${JSON.stringify(raw)} is too large`)
    const mebibytes = Math.floor(bytes / 2 ** 20)
    return mebibytes < 1 ? Either.left(`${JSON.stringify(raw)} is less than 1 MiB`) : Either.right(mebibytes)
  }
}

/**
 * A number of cores (an integer ≥ 1) or `infinite`, read as `Infinity`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const coresOrInfinite: ValueType<number> = {
  _tag: "coresOrInfinite",
  decode: (raw) => {
    const text = raw.trim().toLowerCase()
    if (text === "infinite" || text === "infinity") return Either.right(Infinity)
    return Either.mapLeft(
      decodeInt(raw, 1, undefined),
      () => `${JSON.stringify(raw)} is not a number of cores (an integer ≥ 1, or infinite)`
    )
  }
}
