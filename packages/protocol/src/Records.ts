/**
 * The encoding of an app's values — the records, environments and zero values inside a task, and a task's
 * result: MessagePack with msgpackr's structured-clone extensions, so that a `Map`, `Set`, `Date`, `BigInt`,
 * typed array, `Error` or a value with cycles arrives as it was sent (two exceptions: -0 arrives as 0, as through
 * JSON, and an own key named `__proto__` arrives as `__proto_`, so that no record can set its own prototype).
 * An instance of a class the app registered (`registerClass`) arrives as an instance of that class with its own
 * fields; a function, an Effect, a handle on something of this process (a socket, stream, worker, timer, …) or an
 * instance of any other class is refused with `CannotTravel` saying which it is. (Protocol
 * messages use plain MessagePack; this is only for what the app itself puts in a dataset.) It imports nothing but
 * msgpackr, so a task thread can load it alone: `@kindling/protocol/records`.
 *
 * @since 0.1.0
 */
import { addExtension, Packr } from "msgpackr"
import { Accumulator, Broadcast, TaskContext, taskContext } from "./SharedVariables.js"

/**
 * Why a value cannot travel: it is a function; an Effect (a description of work, whose result was meant: a
 * forgotten `yield*`); a handle on something open in this process — a socket, stream, server, worker, child
 * process, timer, port, file handle, or a Promise — which no other thread or process can use; or an instance of a
 * class the app has not registered. `name` is its class's name, when it has one.
 *
 * @since 0.1.0
 * @category models
 */
export type Untravelled =
  | { readonly _tag: "Function" }
  | { readonly _tag: "Effect"; readonly name: string }
  | { readonly _tag: "Handle"; readonly name: string }
  | { readonly _tag: "UnregisteredClass"; readonly name: string }

const effectTypeId = Symbol.for("effect/Effect")
// Option and Either are Effects in Effect 3 (`yield*` unwraps them) but they are data, not work left undone.
const dataTypeIds = [Symbol.for("effect/Option"), Symbol.for("effect/Either")]

/**
 * Whether `value` is an Effect (Option and Either, which are Effects too in Effect 3, are data and are not).
 *
 * @since 0.1.0
 */
export const isEffect = (value: unknown): boolean =>
  (typeof value === "object" || typeof value === "function") && value !== null && effectTypeId in value &&
  !dataTypeIds.some((id) => id in value)

const classNameOf = (value: object): string =>
  (typeof value === "function" ? value.name : value.constructor?.name) || "(anonymous)"

// What only a handle on a resource of the process has: event emitters (sockets, streams, servers, workers, child
// processes), event targets (message ports, abort signals), timers, file handles, web streams, promises.
const isHandle = (value: Record<string, unknown>): boolean =>
  (typeof value.on === "function" && typeof value.emit === "function") ||
  typeof value.addEventListener === "function" ||
  typeof value.hasRef === "function" ||
  (typeof value.fd === "number" && typeof value.close === "function") ||
  typeof value.getReader === "function" || typeof value.getWriter === "function" ||
  typeof value.then === "function"

/**
 * Why the codec refuses `value` itself (not what it holds), or undefined if it does not. An instance of a
 * registered class, or of what the codec carries by itself, is carried.
 *
 * @since 0.1.0
 */
export const untravelled = (value: unknown): Untravelled | undefined => {
  if (typeof value !== "object" && typeof value !== "function") return undefined
  if (value === null) return undefined
  if (isEffect(value)) return { _tag: "Effect", name: classNameOf(value) }
  if (typeof value === "function") return { _tag: "Function" }
  if (!(value instanceof ClassInstance) || classRegistry().byClass.has(value.constructor)) return undefined
  return isHandle(value as Record<string, unknown>)
    ? { _tag: "Handle", name: classNameOf(value) }
    : { _tag: "UnregisteredClass", name: classNameOf(value) }
}

/**
 * What the codec says of a value it refuses: the words that follow the value's name (`total` is an Effect …).
 *
 * @since 0.1.0
 */
export const whyNot = (reason: Untravelled): string => {
  switch (reason._tag) {
    case "Function":
      return "is a function, and functions travel only as the functions of a transformation"
    case "Effect":
      return `is an Effect (${reason.name}), not its result: did you forget \`yield*\`? An Effect does nothing ` +
        "until it is run; `yield*` runs it and gives its result, which can travel"
    case "Handle":
      return `cannot travel: it is a ${reason.name}, a handle on something open in this process (a socket, ` +
        "stream, worker, timer, …) that other threads and processes cannot use. Open it where it is used (in the " +
        "function, or once per partition in mapPartitions), or send what it is made from (a path, an address)"
    case "UnregisteredClass":
      return `cannot be sent: its class ${reason.name} is not registered. Register it at the top level of the ` +
        `app module — App.registerClass(${reason.name}) — so that its instances arrive as instances`
  }
}

/**
 * A value the codec cannot carry (`Untravelled` says why). Encoding fails with it rather than sending something
 * else (a function would arrive as `undefined`, an instance as a plain object without its methods, a socket as a
 * heap of its internals).
 *
 * @since 0.1.0
 * @category errors
 */
export class CannotTravel extends Error {
  constructor(readonly what: string, readonly reason: Untravelled, advice?: string) {
    super(`${what} ${whyNot(reason)}${advice === undefined ? "" : `. ${advice}`}`)
    this.name = "CannotTravel"
  }
}

/**
 * A value of a registered class arrived where that class is not registered.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownClass extends Error {
  constructor(readonly className: string) {
    super(
      `A value of class ${className} arrived, but no class is registered under that name here: register it at ` +
        `the top level of the app module (App.registerClass), which every executor imports`
    )
    this.name = "UnknownClass"
  }
}

const packr = new Packr({
  moreTypes: true,
  structuredClone: true,
  writeFunction: () => {
    throw new CannotTravel("A value", { _tag: "Function" })
  }
})

// The classes registered by name (`registerClass`), on the global object under a well-known symbol: the app
// module registers them through its own copy of this module, a task thread reads them through its.
const classRegistryKey = Symbol.for("@kindling/registeredClasses")
interface ClassRegistry {
  readonly byName: Map<string, abstract new(...args: Array<any>) => unknown>
  readonly byClass: Map<unknown, string>
}
const classRegistry = (): ClassRegistry => {
  const global = globalThis as Record<symbol, ClassRegistry | undefined>
  return global[classRegistryKey] ??= { byName: new Map(), byClass: new Map() }
}

/**
 * Makes the instances of `cls` travel as instances: they are sent as `name` and their own enumerable fields,
 * and arrive as objects of the class with those fields (its constructor is not run, as Java serialization runs
 * none). Registering another class under a name already taken throws.
 *
 * @since 0.1.0
 */
export const registerClass = (cls: abstract new(...args: Array<any>) => unknown, name: string = cls.name): void => {
  const registry = classRegistry()
  const taken = registry.byName.get(name)
  if (taken === cls) return
  if (taken !== undefined || name === "") {
    throw new Error(
      name === ""
        ? "A class without a name cannot be registered without one: give it a name (registerClass(cls, name))"
        : `Another class is already registered as ${name}: register this one under another name`
    )
  }
  registry.byName.set(name, cls)
  registry.byClass.set(cls, name)
}

// What msgpackr carries by itself (or through the extensions below): anything else made by a class is either
// registered or refused.
const carried = (value: object): boolean =>
  value instanceof Date || value instanceof Set || value instanceof Error || value instanceof RegExp ||
  value instanceof ArrayBuffer || ArrayBuffer.isView(value) || value instanceof Broadcast ||
  value instanceof Accumulator || value instanceof TaskContext || value instanceof Map || Array.isArray(value)

// msgpackr asks its extensions about every object whose constructor is not `Object`, `Array` or `Map`, with
// `instanceof`: this one answers yes for the instances of classes, and null-prototype objects stay plain.
class ClassInstance {
  static [Symbol.hasInstance](value: unknown): boolean {
    if (typeof value !== "object" || value === null) return false
    const prototype = Object.getPrototypeOf(value)
    return prototype !== null && prototype !== Object.prototype && !carried(value)
  }
}
addExtension({
  Class: ClassInstance,
  type: 0x24,
  write: (instance: object) => {
    const name = classRegistry().byClass.get(instance.constructor)
    if (name === undefined) {
      throw new CannotTravel("A value", untravelled(instance) ?? { _tag: "UnregisteredClass", name: "" })
    }
    return [name, { ...instance }]
  },
  read: ([name, fields]: [string, object]) => {
    const cls = classRegistry().byName.get(name)
    if (cls !== undefined) return Object.assign(Object.create(cls.prototype), fields)
    throw new UnknownClass(name)
  }
})

// Broadcasts met while encoding, when someone is collecting them (`encodeCollecting`).
let collecting: Map<number, Broadcast<unknown>> | undefined

// Shared variables travel as references: a broadcast as [id, token], an accumulator as [id, kind, name].
addExtension({
  Class: Broadcast,
  type: 0x21,
  write: (broadcast: Broadcast<unknown>) => {
    collecting?.set(broadcast.id, broadcast)
    return [broadcast.id, broadcast.token]
  },
  read: ([id, token]: [number, string]) => new Broadcast(id, token)
})
addExtension({
  Class: Accumulator,
  type: 0x22,
  write: (accumulator: Accumulator<unknown, unknown>) => [accumulator.id, accumulator.kind, accumulator.name],
  read: ([id, kind, name]: [number, "long" | "collection", string]) => new Accumulator(id, kind, name)
})
// The task context is the same everywhere: it travels as its tag alone.
addExtension({
  Class: TaskContext,
  type: 0x23,
  write: () => 0,
  read: () => taskContext
})

/**
 * The shared variables, for a task thread that loads this entry alone.
 *
 * @since 0.1.0
 */
export * as SharedVariables from "./SharedVariables.js"

/**
 * @since 0.1.0
 */
export const encode = (value: unknown): Uint8Array => packr.pack(value)

/**
 * Encodes `value`, and says which broadcast variables it refers to.
 *
 * @since 0.1.0
 */
export const encodeCollecting = (
  value: unknown
): { readonly bytes: Uint8Array; readonly broadcasts: ReadonlyArray<Broadcast<unknown>> } => {
  collecting = new Map()
  try {
    const bytes = packr.pack(value)
    return { bytes, broadcasts: [...collecting.values()] }
  } finally {
    collecting = undefined
  }
}

/**
 * Throws on bytes that are not such an encoding.
 *
 * @since 0.1.0
 */
export const decode = (bytes: Uint8Array): unknown => packr.unpack(bytes)
