/**
 * Effect Schemas that type the records a reader gives (`kc.read.csv(path, { schema })`): registered by name at
 * the top level of the app module (`App.registerSchema`), so that every executor — which imports the module —
 * has them, and the records of a source are decoded there, as they are read. A schema is code, not data: it
 * travels by the name it is registered under, as an app's registered functions do.
 *
 * @since 0.1.0
 */
import type { TaskPlan } from "@kindling/protocol"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import type * as Schema from "effect/Schema"
import { InvalidArgument } from "./AppErrors.js"
import { registered } from "./UserFunctions.js"

type AnySchema = Schema.Schema<any, any, never>

const registryKey = Symbol.for("@kindling/registeredSchemas")

// Kept on the global object, as registered functions are: the decoding function below reads it in task threads.
const schemas = (): Map<string, AnySchema> => {
  const global = globalThis as Record<symbol, Map<string, AnySchema> | undefined>
  return global[registryKey] ??= new Map()
}

/**
 * The name executors call the decoding function by.
 *
 * @since 0.1.0
 */
export const decodeFunction = "@kindling/app/decodeRecord"

// A record decoded by the schema registered under `name`; a record it rejects throws, with the schema's own
// account of why (which names the field).
registered().set(decodeFunction, (record: unknown, name: string) => {
  const schema = schemas().get(name)
  if (schema === undefined) throw new Error(`No schema is registered as ${name} where this task runs`)
  const decoded = ParseResult.decodeUnknownEither(schema)(record, { errors: "all", onExcessProperty: "ignore" })
  if (Either.isRight(decoded)) return decoded.right
  throw new Error(ParseResult.TreeFormatter.formatIssueSync(decoded.left))
})

/**
 * Registers `schema` under `name`; call it at the top level of the app module.
 *
 * @since 0.1.0
 */
export const register = <S extends AnySchema>(name: string, schema: S): S => {
  const known = schemas().get(name)
  if (known !== undefined && known !== schema) {
    throw new InvalidArgument({ reason: `App.registerSchema: another schema is registered as ${name}` })
  }
  schemas().set(name, schema)
  return schema
}

/**
 * The reference that decodes a source's records by `schema`, which must be registered.
 *
 * @since 0.1.0
 */
export const decoder = (schema: AnySchema, operation: string): typeof TaskPlan.FunctionRef.Encoded => {
  const name = [...schemas()].find(([, known]) => known === schema)?.[0]
  if (name === undefined) {
    throw new InvalidArgument({
      reason: `${operation}: the schema is not registered: register it at the top level of the app module, ` +
        `App.registerSchema("Name", schema), so that executors have it`
    })
  }
  return { _tag: "NamedFunction", name: decodeFunction, env: name }
}
