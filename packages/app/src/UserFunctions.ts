/**
 * How a function given to a transformation reaches the executors (DESIGN §5), as Spark's closures do:
 *
 * - A function the app module exports, or registers with `App.register`, travels by name: every executor
 *   imports the same module.
 * - Any function written in the app's sources travels as a hoisted function: `kindling submit` bundles the app
 *   with a copy of each of its functions at the top level of its module (`@kindling/cli`'s `ClosureHoisting`),
 *   where it reaches everything the module reaches — its top-level helpers, its imports, its constants — and
 *   marks the function itself with where it is written (`closure`). Local variables of the code around it that it
 *   refers to travel by value, as they are when the transformation is declared; local functions travel as
 *   functions. A function that assigns to such a variable is refused on the spot: on an executor it would
 *   assign to a copy, and the driver would never see it (use an accumulator).
 * - A function that was not bundled (code run without `kindling submit`, as a test does) travels as its source
 *   text, and so must be self-contained: its source is parsed (acorn) and its scopes analysed (periscopic), and
 *   a reference to a variable of its surroundings rejects it, naming the variable and the transformation.
 *
 * The environment argument of a transformation, and the captured values, must be values the record codec
 * carries (`@kindling/protocol/records`): a function, an Effect (a forgotten `yield*`), a handle on something of
 * the driver's process (a socket, stream, timer, …) or an instance of an unregistered class in them is refused
 * when the transformation is declared, naming where it is and what it is. The JavaScript platform's globals
 * (`Math`, `JSON`, `Date`, …) are not captures.
 *
 * @since 0.1.0
 */
import type { TaskPlan } from "@kindling/protocol"
import * as Records from "@kindling/protocol/records"
import * as Acorn from "acorn"
import * as Data from "effect/Data"
import { analyze } from "periscopic"

/**
 * The function refers to a variable of its surroundings, which the executors cannot see.
 *
 * @since 0.1.0
 * @category errors
 */
export class FunctionCapturesVariable extends Data.TaggedError("FunctionCapturesVariable")<{
  readonly variable: string
  readonly transformation: string
}> {
  override get message() {
    return `The function given to ${this.transformation} refers to \`${this.variable}\`, a variable outside it, ` +
      `and travels as its source text, without it: functions run on executors. kindling submit copies the app's ` +
      `functions so that they take what they refer to along — all but methods, and arrow functions that use the ` +
      `this, arguments or super of the code around them: wrap such a one, (x) => obj.method(x). Code not run ` +
      `by kindling submit (a test) is not copied: pass the value in the environment argument — ` +
      `${this.transformation}((…, env) => … env.${this.variable} …, { ${this.variable} }) — or export the function ` +
      `from the app module, so that it travels by name.`
  }
}

/**
 * The function cannot be shipped at all: its source is not available (a built-in or bound function) or is not
 * a function expression.
 *
 * @since 0.1.0
 * @category errors
 */
export class FunctionNotShippable extends Data.TaggedError("FunctionNotShippable")<{
  readonly transformation: string
  readonly reason: string
}> {
  override get message() {
    return `The function given to ${this.transformation} cannot be sent to executors: ${this.reason}. Write it ` +
      `as a function expression, or export it from the app module.`
  }
}

/**
 * Any function an app hands to a transformation.
 *
 * @since 0.1.0
 * @category models
 */
export type AnyFunction = (...args: ReadonlyArray<any>) => unknown

const registryKey = Symbol.for("@kindling/registeredFunctions")

/**
 * The functions registered by name in this thread (`App.register`). Kept on the global object, under a
 * well-known symbol, because executors' task threads look them up without importing this package.
 *
 * @since 0.1.0
 */
export const registered = (): Map<string, unknown> => {
  const global = globalThis as Record<symbol, Map<string, unknown> | undefined>
  return global[registryKey] ??= new Map()
}

const platformGlobals = new Set(Object.getOwnPropertyNames(globalThis))

// What a function's source text must parse as: an expression (arrow or function), or — for a method written
// in shorthand, `f(x) { … }` — an object literal's member.
const parseFunction = (source: string): Acorn.Node | undefined => {
  for (const wrapped of [`(${source})`, `({ ${source} })`]) {
    try {
      return Acorn.parse(wrapped, { ecmaVersion: "latest", sourceType: "module" })
    } catch {
      // try the next form
    }
  }
  return undefined
}

// A source text already checked: the same closure declared again costs a map lookup.
const checked = new Map<string, string | undefined>()

const freeVariable = (source: string, transformation: string): string | undefined => {
  if (checked.has(source)) return checked.get(source)
  const ast = parseFunction(source)
  if (ast === undefined) {
    throw new FunctionNotShippable({ transformation, reason: `its source does not parse: ${source.slice(0, 120)}` })
  }
  const { globals } = analyze(ast as unknown as Parameters<typeof analyze>[0])
  const free = [...globals.keys()].find((name) => !platformGlobals.has(name) && name !== "arguments")
  checked.set(source, free)
  return free
}

/**
 * The function assigns to a local variable of the code around it: on an executor it would assign to a copy,
 * and the driver would never see the change.
 *
 * @since 0.1.0
 * @category errors
 */
export class FunctionAssignsCapturedVariable extends Data.TaggedError("FunctionAssignsCapturedVariable")<{
  readonly variable: string
  readonly transformation: string
  readonly at: string
}> {
  override get message() {
    return `The function given to ${this.transformation} (${this.at}) assigns to \`${this.variable}\`, a local ` +
      `variable outside it; it runs on executors, each with its own copy, and the driver would never see the ` +
      `change. Count or collect with an accumulator (kc.longAccumulator, kc.collectionAccumulator), or return ` +
      `the values from the transformation.`
  }
}

/**
 * A value the function needs — in its environment argument, or a local variable it refers to — cannot be sent:
 * `reason` says what it is (an Effect whose `yield*` was forgotten, a socket, …).
 *
 * @since 0.1.0
 * @category errors
 */
export class ValueCannotTravel extends Data.TaggedError("ValueCannotTravel")<{
  readonly transformation: string
  readonly path: string
  readonly reason: Records.Untravelled
}> {
  override get message() {
    const value = `The function given to ${this.transformation} needs \`${this.path}\`, which`
    switch (this.reason._tag) {
      case "Function":
        return `${value} is a function. Functions do not travel as values: call the function from the ` +
          `transformation's own function (in a submitted app it may call any function its module reaches).`
      case "Effect": {
        // A local variable's own name shows where the `yield*` goes; a path inside the environment does not.
        const where = /^[\p{L}_$][\p{L}\p{N}_$]*$/u.test(this.path) ? ` (\`const ${this.path} = yield* …\`)` : ""
        return `${value} is an Effect (${this.reason.name}), not its result: did you forget \`yield*\` where it ` +
          `is made${where}? An Effect does nothing until it is run; \`yield*\` runs it and gives its result, ` +
          `which travels.`
      }
      case "Handle":
      case "UnregisteredClass":
        return `${value} ${Records.whyNot(this.reason)}.`
    }
  }
}

/**
 * What the bundler says of a function it hoisted: where it is written, and the local variables it refers to.
 *
 * @since 0.1.0
 * @category models
 */
export interface Closure {
  readonly id: string
  /** The local variables the function refers to. */
  readonly names: ReadonlyArray<string>
  /** Their current values, in the same order. */
  readonly values: (() => ReadonlyArray<unknown>) | undefined
  /** The local variables it assigns to. */
  readonly assigns: ReadonlyArray<string>
}

const closuresKey = Symbol.for("@kindling/closures")
const hoistedKey = Symbol.for("@kindling/hoistedFunctions")

// Kept on the global object: the bundled app reaches this module through the installation it runs on, which
// may be another copy of it than the one its runner imported.
const closures = (): WeakMap<AnyFunction, Closure> => {
  const global = globalThis as Record<symbol, WeakMap<AnyFunction, Closure> | undefined>
  return global[closuresKey] ??= new WeakMap()
}

/**
 * The factories of hoisted functions by id, where executors find them once they have imported the app module.
 *
 * @since 0.1.0
 */
export const hoisted = (): Map<string, (captured: Record<string, unknown>) => AnyFunction> => {
  const global = globalThis as Record<symbol, Map<string, (captured: Record<string, unknown>) => AnyFunction>>
  return global[hoistedKey] ??= new Map()
}

/**
 * Marks `fn` as the function written at `id`, whose copy the bundle hoisted, referring to the local variables
 * `names` (their values read by `values`) and assigning to `assigns`; called by the code the bundler writes, where
 * the function is made. Returns `fn`.
 *
 * @since 0.1.0
 */
export const closure = <F extends AnyFunction>(
  id: string,
  fn: F,
  names: ReadonlyArray<string> = [],
  values?: () => ReadonlyArray<unknown>,
  assigns: ReadonlyArray<string> = []
): F => {
  closures().set(fn, { id, names, values, assigns })
  return fn
}

/**
 * Registers the factory of the function written at `id`; called by the code the bundler writes, at the top
 * level of the module.
 *
 * @since 0.1.0
 */
export const hoist = (id: string, factory: (captured: Record<string, unknown>) => AnyFunction): void => {
  hoisted().set(id, factory)
}

// The first value in `value` the record codec refuses, as a path from `root` (`env.parsers[1]`), and why: for an
// error that says where.
const untravelledIn = (
  value: unknown,
  root: string
): { readonly path: string; readonly reason: Records.Untravelled } | undefined => {
  const seen = new Set<unknown>()
  const visit = (inner: unknown, path: string): { path: string; reason: Records.Untravelled } | undefined => {
    const reason = Records.untravelled(inner)
    if (reason !== undefined) return { path, reason }
    if (typeof inner !== "object" || inner === null || seen.has(inner)) return undefined
    seen.add(inner)
    if (inner instanceof Map) {
      for (const [key, entry] of inner) {
        const found = visit(key, `${path} key`) ?? visit(entry, `${path}.get(${String(key)})`)
        if (found !== undefined) return found
      }
      return undefined
    }
    if (inner instanceof Set) {
      for (const entry of inner) {
        const found = visit(entry, `${path} member`)
        if (found !== undefined) return found
      }
      return undefined
    }
    for (const [key, entry] of Object.entries(inner)) {
      const found = visit(entry, Array.isArray(inner) ? `${path}[${key}]` : `${path}.${key}`)
      if (found !== undefined) return found
    }
    return undefined
  }
  return visit(value, root)
}

// A value goes to the executors only if the record codec carries it all: checked when the transformation is
// declared, not when its tasks are sent, so that the error points at the declaration.
const checkTravels = (value: unknown, path: string, transformation: string): void => {
  if (value === undefined) return
  // What the codec would not even see as refused: a Context tag, which it would send as the object it also is.
  const itself = Records.untravelled(value)
  if (itself !== undefined) throw new ValueCannotTravel({ transformation, path, reason: itself })
  try {
    Records.encode(value)
  } catch (error) {
    if (!(error instanceof Records.CannotTravel)) throw error
    const found = untravelledIn(value, path) ?? { path, reason: error.reason }
    throw new ValueCannotTravel({ transformation, path: found.path, reason: found.reason })
  }
}

/**
 * How `fn` travels, with `env` handed to it as its last argument. Throws `FunctionCapturesVariable`,
 * `FunctionAssignsCapturedVariable`, `ValueCannotTravel` or `FunctionNotShippable` when it cannot travel — at
 * declaration, as Spark's closure check does.
 *
 * @since 0.1.0
 */
export const reference = (
  fn: AnyFunction,
  env: unknown,
  transformation: string,
  appExports: Readonly<Record<string, unknown>>
): typeof TaskPlan.FunctionRef.Encoded => {
  checkTravels(env, "env", transformation)
  return functionRef(fn, env, transformation, appExports, new Set())
}

const functionRef = (
  fn: AnyFunction,
  env: unknown,
  transformation: string,
  appExports: Readonly<Record<string, unknown>>,
  enclosing: Set<AnyFunction>
): typeof TaskPlan.FunctionRef.Encoded => {
  if (typeof fn !== "function") {
    throw new FunctionNotShippable({ transformation, reason: `it is a ${typeof fn}, not a function` })
  }
  for (const [name, registeredFn] of registered()) {
    if (registeredFn === fn) return { _tag: "NamedFunction", name, env }
  }
  for (const [name, exported] of Object.entries(appExports)) {
    if (exported === fn && name !== "default") return { _tag: "NamedFunction", name, env }
  }
  const hoistedClosure = closures().get(fn)
  if (hoistedClosure !== undefined) return closureRef(fn, hoistedClosure, env, transformation, appExports, enclosing)
  const source = Function.prototype.toString.call(fn)
  if (source.endsWith("{ [native code] }")) {
    throw new FunctionNotShippable({ transformation, reason: "it is a built-in or bound function" })
  }
  const variable = freeVariable(source, transformation)
  if (variable !== undefined) throw new FunctionCapturesVariable({ variable, transformation })
  return { _tag: "SourceFunction", source, env }
}

const closureRef = (
  fn: AnyFunction,
  { assigns, id, names, values }: Closure,
  env: unknown,
  transformation: string,
  appExports: Readonly<Record<string, unknown>>,
  enclosing: Set<AnyFunction>
): typeof TaskPlan.FunctionRef.Encoded => {
  if (assigns.length > 0) throw new FunctionAssignsCapturedVariable({ variable: assigns[0]!, transformation, at: id })
  const captured: Record<string, unknown> = {}
  const functions: Record<string, typeof TaskPlan.FunctionRef.Encoded> = {}
  const inner = new Set(enclosing).add(fn)
  let current: ReadonlyArray<unknown>
  try {
    current = values?.() ?? []
  } catch (error) {
    // A variable read before its declaration ran (`const` in its temporal dead zone).
    throw new FunctionNotShippable({ transformation, reason: `${id}: ${String(error)}` })
  }
  for (const [i, name] of names.entries()) {
    const value = current[i]
    // A Context tag is a function, but what was meant is the service it stands for: `yield*` it.
    if (typeof value === "function" && Records.untravelled(value)?._tag !== "Effect") {
      if (inner.has(value as AnyFunction)) {
        throw new FunctionNotShippable({
          transformation,
          reason: `${id} refers to \`${name}\`, a local function that refers back to it; local functions that ` +
            `call each other travel when they are moved to the top level of the module`
        })
      }
      functions[name] = functionRef(
        value as AnyFunction,
        undefined,
        `${transformation} (through \`${name}\`)`,
        appExports,
        inner
      )
    } else {
      checkTravels(value, name, transformation)
      captured[name] = value
    }
  }
  return { _tag: "ClosureFunction", id, captured, functions, env }
}
