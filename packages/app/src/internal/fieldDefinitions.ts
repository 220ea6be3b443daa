// Fields as an app gives them: a list of `Field`s, or Spark's DDL text (`name STRING, price DECIMAL(10,2)`) —
// and, where an app gives none for records it writes, the fields inferred from a sample of its records.
import { FieldValues } from "@kindling/data"
import type { DataFormats } from "@kindling/protocol"
import { InvalidArgument } from "../AppErrors.js"
import * as CommaLists from "./commaLists.js"

type Field = DataFormats.Field
type FieldType = DataFormats.FieldType

/** Fields as DDL text or as a list. */
export type FieldsInput = string | ReadonlyArray<Field>

const typeNames: ReadonlyArray<readonly [RegExp, FieldType]> = [
  [/^(string|varchar(\(\d+\))?|char(\(\d+\))?)$/, "string"],
  [/^(boolean|bool)$/, "boolean"],
  [/^(int|integer|smallint|tinyint|short|byte)$/, "int"],
  [/^(bigint|long)$/, "long"],
  [/^(float|real)$/, "float"],
  [/^double$/, "double"],
  [/^date$/, "date"],
  [/^timestamp(_ltz)?$/, "timestamp"],
  [/^binary$/, "binary"],
  // Nested types, their elements' types as the data has them.
  [/^array(<.*>)?$/, "array"],
  [/^map(<.*>)?$/, "map"],
  [/^struct(<.*>)?$/, "struct"]
]

const fieldOf = (definition: string, operation: string): Field => {
  const match = /^\s*(`[^`]+`|[^\s:]+)\s*:?\s+(.+?)(\s+not\s+null)?\s*$/i.exec(definition)
  if (match === null) {
    throw new InvalidArgument({ reason: `${operation}: ${JSON.stringify(definition)} is no field: write "name TYPE"` })
  }
  const name = match[1]!.replace(/^`|`$/g, "")
  const type = match[2]!.toLowerCase().replaceAll(" ", "")
  const nullable = match[3] === undefined
  const decimal = /^(decimal|numeric|dec)(?:\((\d+)(?:,(\d+))?\))?$/.exec(type)
  if (decimal !== null) {
    const precision = decimal[2] === undefined ? 10 : Number(decimal[2])
    const scale = decimal[3] === undefined ? 0 : Number(decimal[3])
    if (precision < 1 || precision > 38 || scale > precision) {
      throw new InvalidArgument({ reason: `${operation}: ${name}: decimal(${precision},${scale}) is out of range` })
    }
    return { name, type: "decimal", nullable, precision, scale }
  }
  const known = typeNames.find(([pattern]) => pattern.test(type))
  if (known === undefined) {
    throw new InvalidArgument({
      reason: `${operation}: ${name}: unknown type ${JSON.stringify(match[2])} (string, boolean, int, long, float, ` +
        `double, decimal(p,s), date, timestamp, binary, array, map, struct)`
    })
  }
  return { name, type: known[1], nullable }
}

/**
 * Refuses a field named `__proto__`, wherever fields are settled (given, or read from a header or a file's
 * schema): a record is an object with a property per field, and the property `__proto__` is its
 * prototype — assigned, the value is lost — and MessagePack, which carries records between processes, renames
 * that key (msgpackr's guard against prototype pollution), so such a field would lose its values silently.
 * `found` says where the names came from ("the header of … names"), `remedy` what to do instead.
 */
export const refuseUnholdable = (names: Iterable<string>, operation: string, found: string, remedy: string) => {
  for (const name of names) {
    if (name === "__proto__") {
      throw new InvalidArgument({
        reason: `${operation}: ${found} a field __proto__, which a record cannot hold (a property of that ` +
          `name is its prototype): ${remedy}`
      })
    }
  }
}

/** The fields given, checked: names unique, types known, each one a record can hold. */
export const parse = (input: FieldsInput, operation: string): DataFormats.Fields => {
  const fields = typeof input === "string"
    ? CommaLists.split(input, "(<", ")>").map((definition) => fieldOf(definition, operation))
    : [...input]
  if (fields.length === 0) throw new InvalidArgument({ reason: `${operation}: no fields given` })
  const names = new Set<string>()
  for (const field of fields) {
    if (names.has(field.name)) {
      throw new InvalidArgument({ reason: `${operation}: the field ${JSON.stringify(field.name)} is given twice` })
    }
    names.add(field.name)
  }
  refuseUnholdable(names, operation, "the fields given have", "give that field another name")
  return fields
}

/**
 * The fields of records that are objects, by the values of a sample of them: a property's type is the narrowest
 * that holds every value it has (numbers widen, anything else mixed is a string); properties in the order they
 * first appear; one whose values are all null is a string.
 */
export const inferFromValues = (records: ReadonlyArray<unknown>, operation: string): DataFormats.Fields => {
  const types = new Map<string, Field | undefined>()
  for (const record of records) {
    if (typeof record !== "object" || record === null || Array.isArray(record) || record instanceof Date) {
      throw new InvalidArgument({
        reason: `${operation} writes records that are objects, a property per column; got ${
          Array.isArray(record) ? "an array" : record === null ? "null" : typeof record
        }: map the records to objects first, or give the fields`
      })
    }
    for (const [name, value] of Object.entries(record)) {
      const type = FieldValues.typeOfValue(value)
      const known = types.get(name)
      types.set(name, known === undefined ? type : type === undefined ? known : FieldValues.widen(known, type))
    }
  }
  return [...types].map(([name, field]) => ({ ...(field ?? { type: "string" as const, nullable: true }), name }))
}
