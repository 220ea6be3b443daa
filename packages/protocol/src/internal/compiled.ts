// A fast path for the schema codec. Effect's ParseResult interprets the schema AST on every call and builds
// each class instance through its validating constructor; for the messages of this protocol that costs several
// times more than MessagePack itself. This module compiles an AST once into plain functions that accept only
// what they are sure the schema accepts and produce the same values. Anything they are not sure of — an
// unsupported node, a failed check — returns `Fail`, and the caller falls back to Effect's own parser, which
// then decides and produces the error message. A property test holds the two paths together for every
// message of the catalogue.
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

export const Fail: unique symbol = Symbol.for("@kindling/protocol/compiled/Fail")
export type Fail = typeof Fail

type Step = (input: unknown) => unknown

export interface Compiled {
  readonly decode: Step
  readonly encode: Step
}

const parseOptions: AST.ParseOptions = {}

// Class constructors by the AST of their schema, found by walking the schema objects handed to `compile`.
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- any class constructor
const classes = new WeakMap<AST.AST, Function>()

const registerClasses = (schema: unknown, seen: Set<unknown>): void => {
  if ((typeof schema !== "object" && typeof schema !== "function") || schema === null || seen.has(schema)) return
  seen.add(schema)
  const value = schema as Record<string, unknown>
  if (typeof schema === "function" && Schema.isSchema(schema) && "fields" in schema) {
    // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- any class constructor
    classes.set((schema as unknown as Schema.Schema.Any).ast, schema as Function)
  }
  for (const key of ["fields", "members", "elements", "rest", "value", "key", "from", "to", "schema"]) {
    const child = value[key]
    if (Array.isArray(child)) child.forEach((c) => registerClasses(c, seen))
    else if (key === "fields" && typeof child === "object" && child !== null) {
      Object.values(child).forEach((c) => registerClasses(c, seen))
    } else registerClasses(child, seen)
  }
}

const isRecord = (u: unknown): u is Record<PropertyKey, unknown> => typeof u === "object" && u !== null

interface Pair {
  readonly decode: Step
  readonly encode: Step
}

const fail: Step = () => Fail
const identity: Step = (u) => u
const failing: Pair = { decode: fail, encode: fail }

const guard = (is: (u: unknown) => boolean): Pair => {
  const check: Step = (u) => (is(u) ? u : Fail)
  return { decode: check, encode: check }
}

const go = (ast: AST.AST): Pair => {
  switch (ast._tag) {
    case "StringKeyword":
      return guard((u) => typeof u === "string")
    case "NumberKeyword":
      return guard((u) => typeof u === "number")
    case "BooleanKeyword":
      return guard((u) => typeof u === "boolean")
    // An optional field that is there with no value (`Schema.optional` allows it).
    case "UndefinedKeyword":
      return guard((u) => u === undefined)
    case "UnknownKeyword":
    case "AnyKeyword":
      return { decode: identity, encode: identity }
    case "Literal": {
      const literal = ast.literal
      return guard((u) => u === literal)
    }
    case "Refinement":
      return refinement(ast)
    case "Union":
      return union(ast)
    case "TupleType":
      return tuple(ast)
    case "TypeLiteral":
      return typeLiteral(ast)
    case "Transformation":
      return transformation(ast)
    case "Declaration":
      return declaration(ast)
    case "Suspend": {
      let inner: Pair | undefined
      const get = () => (inner ??= go(ast.f()))
      return { decode: (u) => get().decode(u), encode: (u) => get().encode(u) }
    }
    default:
      return failing
  }
}

const refinement = (ast: AST.Refinement): Pair => {
  const from = go(ast.from)
  const passes = (u: unknown) => Option.isNone(ast.filter(u, parseOptions, ast))
  return {
    decode: (u) => {
      const value = from.decode(u)
      return value !== Fail && passes(value) ? value : Fail
    },
    // Encoding checks the value against the refinement first, as Effect does.
    encode: (u) => (passes(u) ? from.encode(u) : Fail)
  }
}

const literalKeys = (ast: AST.AST): Array<[PropertyKey, AST.LiteralValue]> => {
  const node = ast._tag === "Transformation" ? ast.from : ast
  if (node._tag !== "TypeLiteral") return []
  return node.propertySignatures.flatMap((p) =>
    p.type._tag === "Literal" && !p.isOptional ? [[p.name, p.type.literal] as [PropertyKey, AST.LiteralValue]] : []
  )
}

const union = (ast: AST.Union): Pair => {
  const members = ast.types.map(go)
  // Tagged unions (every member has a required `_tag` literal, all different) dispatch on the tag.
  const tags = ast.types.map((t) => literalKeys(t).find(([name]) => name === "_tag")?.[1])
  if (tags.every((tag) => typeof tag === "string") && new Set(tags).size === tags.length) {
    const byTag = new Map(tags.map((tag, i) => [tag, members[i]!]))
    const pick = (u: unknown) => (isRecord(u) ? byTag.get(u._tag as string) : undefined)
    return {
      decode: (u) => pick(u)?.decode(u) ?? Fail,
      encode: (u) => pick(u)?.encode(u) ?? Fail
    }
  }
  // Otherwise the first member that takes the value wins, which is Effect's rule for members that do not
  // overlap; the catalogue's other unions are literals and `X | null`.
  const first = (side: "decode" | "encode"): Step => (u) => {
    for (const member of members) {
      const value = member[side](u)
      if (value !== Fail) return value
    }
    return Fail
  }
  return { decode: first("decode"), encode: first("encode") }
}

const tuple = (ast: AST.TupleType): Pair => {
  if (ast.elements.some((e) => e.isOptional) || ast.rest.length > 1) return failing
  const elements = ast.elements.map((e) => go(e.type))
  const rest = ast.rest.length === 1 ? go(ast.rest[0]!.type) : undefined
  const side = (name: "decode" | "encode"): Step => (u) => {
    if (!Array.isArray(u)) return Fail
    if (rest === undefined ? u.length !== elements.length : u.length < elements.length) return Fail
    const out = new Array(u.length)
    for (let i = 0; i < u.length; i++) {
      const value = (i < elements.length ? elements[i]! : rest!)[name](u[i])
      if (value === Fail) return Fail
      out[i] = value
    }
    return out
  }
  return { decode: side("decode"), encode: side("encode") }
}

const hasOwn = Object.prototype.hasOwnProperty

// `instance` makes the object a class decodes into; its `_tag` is written last, where the class constructors
// put it. Plain structs keep the schema's key order.
const typeLiteral = (ast: AST.TypeLiteral, instance?: () => Record<PropertyKey, unknown>): Pair => {
  if (ast.indexSignatures.length > 1) return failing
  const index = ast.indexSignatures[0]
  if (index !== undefined && (ast.propertySignatures.length > 0 || index.parameter._tag !== "StringKeyword")) {
    return failing
  }
  if (index !== undefined) {
    const values = go(index.type)
    const side = (step: Step): Step => (u) => {
      if (!isRecord(u) || Array.isArray(u)) return Fail
      const out: Record<string, unknown> = {}
      for (const key of Object.keys(u)) {
        const value = step(u[key])
        if (value === Fail) return Fail
        out[key] = value
      }
      return out
    }
    return { decode: side(values.decode), encode: side(values.encode) }
  }
  // Decoding into a class instance writes `_tag` last; encoded maps keep the schema's own key order, as
  // Effect's encoder writes them.
  const encodeOrder = ast.propertySignatures
  const decodeOrder = instance === undefined ? encodeOrder : [
    ...encodeOrder.filter((p) => p.name !== "_tag"),
    ...encodeOrder.filter((p) => p.name === "_tag")
  ]
  const pairs = new Map(encodeOrder.map((p) => [p.name, go(p.type)]))
  const side = (
    order: ReadonlyArray<AST.PropertySignature>,
    step: (pair: Pair) => Step,
    make: () => Record<PropertyKey, unknown>
  ): Step => {
    const names = order.map((p) => p.name)
    const optional = order.map((p) => p.isOptional)
    const steps = order.map((p) => step(pairs.get(p.name)!))
    return (u) => {
      if (!isRecord(u) || Array.isArray(u)) return Fail
      const out = make()
      for (let i = 0; i < names.length; i++) {
        const name = names[i]!
        const input = u[name]
        if (input === undefined && !hasOwn.call(u, name)) {
          if (optional[i]) continue
          return Fail
        }
        const value = steps[i]!(input)
        if (value === Fail) return Fail
        out[name] = value
      }
      return out
    }
  }
  const plain = () => ({})
  return {
    decode: side(decodeOrder, (pair) => pair.decode, instance ?? plain),
    encode: side(encodeOrder, (pair) => pair.encode, plain)
  }
}

const transformation = (ast: AST.Transformation): Pair => {
  const klass = classes.get(ast)
  if (
    klass !== undefined && ast.transformation._tag === "FinalTransformation" && ast.from._tag === "TypeLiteral" &&
    !(klass.prototype instanceof Error)
  ) {
    // A class decodes straight into a fresh instance, as its constructor would fill it in, minus the copying,
    // defaults and validation that decoding has already done. (Errors keep their constructor: it captures a
    // stack.)
    const prototype = klass.prototype
    const fields = typeLiteral(ast.from, () => Object.create(prototype))
    return { decode: fields.decode, encode: (u) => (u instanceof klass ? fields.encode(u) : Fail) }
  }
  const from = go(ast.from)
  if (klass !== undefined && ast.transformation._tag === "FinalTransformation") {
    const Klass = klass as new(props: object, disableValidation: boolean) => unknown
    return {
      decode: (u) => {
        const props = from.decode(u)
        return props === Fail ? Fail : new Klass(props as object, true)
      },
      encode: (u) => (u instanceof klass ? from.encode(u) : Fail)
    }
  }
  if (ast.transformation._tag !== "FinalTransformation") return failing
  // Any other final transformation (OptionFromNullOr, say): its own functions, then the target's checks.
  const { decode, encode } = ast.transformation
  const to = go(ast.to)
  return {
    decode: (u) => {
      const value = from.decode(u)
      if (value === Fail) return Fail
      const out = result(decode(value, parseOptions, ast, u))
      return out === Fail ? Fail : to.decode(out)
    },
    encode: (u) => {
      const value = to.encode(u)
      if (value === Fail) return Fail
      const out = result(encode(value, parseOptions, ast, u))
      return out === Fail ? Fail : from.encode(out)
    }
  }
}

// A declaration (Uint8Array, Option, a class's type side) checks values with its own functions, built once
// here as Effect's parser builds them; only a synchronous success is taken.
const declaration = (ast: AST.Declaration): Pair => {
  const constructor = ast.annotations[AST.TypeConstructorAnnotationId] as { readonly _tag?: string } | undefined
  if (constructor?._tag === "effect/Option" && ast.typeParameters.length === 1) {
    // Option<A> as Effect parses it: None stays None, Some's value is parsed as an A and wrapped anew.
    const value = go(ast.typeParameters[0]!)
    const side = (step: Step): Step => (u) => {
      if (!Option.isOption(u)) return Fail
      if (Option.isNone(u)) return Option.none()
      const inner = step(u.value)
      return inner === Fail ? Fail : Option.some(inner)
    }
    return { decode: side(value.decode), encode: side(value.encode) }
  }
  const decodeUnknown = ast.decodeUnknown(...ast.typeParameters)
  const encodeUnknown = ast.encodeUnknown(...ast.typeParameters)
  return {
    decode: (u) => result(decodeUnknown(u, parseOptions, ast)),
    encode: (u) => result(encodeUnknown(u, parseOptions, ast))
  }
}

const result = (effect: unknown) => {
  const either = effect as Either.Either<unknown, unknown>
  return Either.isEither(either) && Either.isRight(either) ? either.right : Fail
}

const compiledBySchema = new WeakMap<object, Compiled>()

export const compile = (schema: Schema.Schema<any, any, never>): Compiled => {
  let compiled = compiledBySchema.get(schema)
  if (compiled === undefined) {
    registerClasses(schema, new Set())
    const pair = go(schema.ast)
    compiled = { decode: pair.decode, encode: pair.encode }
    compiledBySchema.set(schema, compiled)
  }
  return compiled
}
