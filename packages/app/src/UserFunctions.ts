/**
 * How a function given to a transformation reaches the executors (DESIGN §5). A function the app module
 * exports, or registers with `App.register`, travels by name: every executor imports the same module. Any other
 * function travels as its source text, and so must be self-contained: when the transformation is declared its
 * source is parsed (acorn) and its scopes analysed (periscopic), and a reference to a variable of its
 * surroundings rejects it on the spot, naming the variable and the transformation. Values it needs go in the
 * transformation's environment argument, which the function receives as its last parameter. The JavaScript
 * platform's globals (`Math`, `JSON`, `Date`, …) are not captures.
 *
 * @since 0.1.0
 */
import type { TaskPlan } from "@kindling/protocol"
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
    return `The function given to ${this.transformation} refers to \`${this.variable}\`, a variable outside it; ` +
      `functions run on executors, which cannot see it. Pass its value in the environment argument — ` +
      `${this.transformation}((…, env) => … env.${this.variable} …, { ${this.variable} }) — or export the ` +
      `function from the app module, so that it travels by name.`
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
 * How `fn` travels, with `env` handed to it as its last argument. Throws `FunctionCapturesVariable` or
 * `FunctionNotShippable` when it cannot travel — at declaration, as Spark's closure check does.
 *
 * @since 0.1.0
 */
export const reference = (
  fn: AnyFunction,
  env: unknown,
  transformation: string,
  appExports: Readonly<Record<string, unknown>>
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
  const source = Function.prototype.toString.call(fn)
  if (source.endsWith("{ [native code] }")) {
    throw new FunctionNotShippable({ transformation, reason: "it is a built-in or bound function" })
  }
  const variable = freeVariable(source, transformation)
  if (variable !== undefined) throw new FunctionCapturesVariable({ variable, transformation })
  return { _tag: "SourceFunction", source, env }
}
