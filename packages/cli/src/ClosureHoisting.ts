/**
 * How `kindling submit` makes an app's functions travel as Spark's closures do (DESIGN §5): while bundling, every
 * function written in the app's own sources gets a copy at the top level of its module — a factory that makes
 * it from the local variables of the code around it that it refers to — registered under where the function is
 * written (`logs.ts:42:17`). Executors import the same bundle, so the copy reaches what the original reaches:
 * the module's helpers, its imports, its constants. Where the function is made, the original is marked with
 * that place and with a way to read those local variables (`UserFunctions.closure`), so that a transformation
 * given it sends the place and the variables' values (`UserFunctions.reference`). The original runs unchanged
 * on the driver.
 *
 * Left as they are, to travel as before (by name or as self-contained source): methods, class members, and
 * arrow functions that use the `this`, `arguments` or `super` of the code around them, whose copies would mean
 * something else.
 *
 * The rewritten module keeps a source map through the rewrite, so a stack trace names the user's file and line.
 *
 * @since 0.1.0
 */
import * as Acorn from "acorn"
import * as Esbuild from "esbuild"
import type * as Estree from "estree"
import isReference from "is-reference"
import { analyze, type Scope } from "periscopic"
import * as SourceSplice from "./internal/sourceSplice.js"

/**
 * The name the rewritten module gives `@kindling/app`'s `UserFunctions`.
 *
 * @since 0.1.0
 */
export const runtime = "__kindling_UserFunctions"

type FunctionNode = Estree.ArrowFunctionExpression | Estree.FunctionExpression | Estree.FunctionDeclaration

type Node = Estree.Node & { readonly start: number; readonly end: number }

// What the rewrite learns of one function.
interface Hoisted {
  readonly node: FunctionNode & Node
  /** The name the language gives an anonymous function from where it is written (`const parse = (…) => …`). */
  readonly inferredName: string | undefined
  /** Local variables of the code around it that it refers to. */
  readonly captured: Set<string>
  /** Those it assigns to. */
  readonly assigns: Set<string>
  /** It uses the `this`, `arguments`, `super` or `new.target` of the code around it, or a private name. */
  lexical: boolean
  /** Where the code marking a function declaration goes: the start of the body that declares it. */
  readonly declaredAt: number | undefined
  /** The module-level constant it is, if it is one: then the module holds it already, and needs no copy. */
  readonly moduleConstant: string | undefined
}

const isFunction = (node: Estree.Node): node is FunctionNode =>
  node.type === "ArrowFunctionExpression" || node.type === "FunctionExpression" ||
  node.type === "FunctionDeclaration"

// Names bound by a pattern (`[a, { b }] = …`).
const patternNames = (pattern: Estree.Pattern, names: Array<string> = []): Array<string> => {
  switch (pattern.type) {
    case "Identifier":
      names.push(pattern.name)
      break
    case "ObjectPattern":
      for (const property of pattern.properties) {
        patternNames(property.type === "RestElement" ? property.argument : property.value, names)
      }
      break
    case "ArrayPattern":
      for (const element of pattern.elements) if (element !== null) patternNames(element, names)
      break
    case "RestElement":
      patternNames(pattern.argument, names)
      break
    case "AssignmentPattern":
      patternNames(pattern.left, names)
      break
    case "MemberExpression":
      break
  }
  return names
}

const childrenOf = (node: Estree.Node): Array<Estree.Node> => {
  const children: Array<Estree.Node> = []
  for (const [key, value] of Object.entries(node)) {
    if (key === "type" || key === "loc" || key === "range") continue
    if (Array.isArray(value)) {
      for (const item of value) if (item !== null && typeof item?.type === "string") children.push(item)
    } else if (value !== null && typeof value === "object" && typeof value.type === "string") {
      children.push(value as Estree.Node)
    }
  }
  return children
}

// The name an anonymous function expression takes from where it is written, as the language infers it.
const inferredNameOf = (node: FunctionNode, parent: Estree.Node | undefined): string | undefined => {
  if (node.type !== "ArrowFunctionExpression" && node.id) return undefined
  if (parent === undefined) return undefined
  if (parent.type === "VariableDeclarator" && parent.init === node && parent.id.type === "Identifier") {
    return parent.id.name
  }
  if (parent.type === "AssignmentExpression" && parent.right === node && parent.left.type === "Identifier") {
    return parent.left.name
  }
  if (parent.type === "Property" && parent.value === node && !parent.computed && parent.kind === "init") {
    if (parent.key.type === "Identifier") return parent.key.name
    if (parent.key.type === "Literal" && typeof parent.key.value === "string") return parent.key.value
  }
  return undefined
}

// Functions that are part of an object or a class rather than values of their own.
const isMember = (parent: Estree.Node | undefined): boolean =>
  parent !== undefined && (
    parent.type === "MethodDefinition" || parent.type === "PropertyDefinition" ||
    (parent.type === "Property" && (parent.method || parent.kind !== "init"))
  )

/**
 * Finds the functions to hoist in a parsed module and what each refers to.
 */
const analyse = (program: Estree.Program, prologue: number): Array<Hoisted> => {
  const { map, scope: moduleScope } = analyze(program as never)
  const depth = new Map<Scope, number>([[moduleScope, 0]])
  const found: Array<Hoisted> = []
  // The functions around the node being visited, innermost last, each with its scope's depth; "class" where a
  // class body begins, which binds `super`, private names and a field initializer's `this`.
  type Enclosing = { readonly hoisted: Hoisted | undefined; readonly node: FunctionNode; readonly depth: number }
  const enclosing: Array<Enclosing | "class"> = []

  // A use of what the code around a function binds: `this`, `arguments` and `new.target` (`arrowsOnly`: bound
  // by the closest ordinary function), or `super` and private names (bound by the closest class). The functions
  // that use it from inside, up to the binder, would mean something else once copied out.
  const usesSurroundings = (arrowsOnly: boolean) => {
    for (let i = enclosing.length - 1; i >= 0; i--) {
      const entry = enclosing[i]!
      if (entry === "class") return
      if (arrowsOnly && entry.node.type !== "ArrowFunctionExpression") return
      if (entry.hoisted !== undefined) entry.hoisted.lexical = true
    }
  }

  const reference = (name: string, scope: Scope, assigned: boolean) => {
    const owner = scope.find_owner(name)
    if (owner === null) {
      // `arguments` belongs to the closest ordinary function: an arrow's is its surroundings'.
      if (name === "arguments") usesSurroundings(true)
      return
    }
    if (owner === moduleScope) return
    const ownerDepth = depth.get(owner)!
    for (const entry of enclosing) {
      if (entry !== "class" && entry.hoisted !== undefined && ownerDepth < entry.depth) {
        entry.hoisted.captured.add(name)
        if (assigned) entry.hoisted.assigns.add(name)
      }
    }
  }

  // Declarators of `const`: a function declared in one at the top level is one of the module's constants.
  const constants = new WeakSet<Estree.Node>()

  const visit = (node: Estree.Node, parent: Estree.Node | undefined, scope: Scope, declaredAt: number | undefined) => {
    const own = map.get(node as never)
    let current = scope
    if (own !== undefined) {
      depth.set(own, depth.get(scope)! + 1)
      current = own
    }
    switch (node.type) {
      case "Identifier":
        if (parent !== undefined && isReference(node as never, parent as never)) reference(node.name, current, false)
        return
      case "ThisExpression":
        usesSurroundings(true)
        return
      case "Super":
      case "PrivateIdentifier":
        usesSurroundings(false)
        return
      case "MetaProperty":
        if (node.meta.name === "new") usesSurroundings(true)
        return
      case "ClassBody":
        enclosing.push("class")
        for (const child of childrenOf(node)) visit(child, node, current, undefined)
        enclosing.pop()
        return
      case "AssignmentExpression":
        for (const name of patternNames(node.left as Estree.Pattern)) reference(name, current, true)
        break
      case "VariableDeclaration":
        if (node.kind === "const") { for (const declarator of node.declarations) constants.add(declarator) }
        break
      case "UpdateExpression":
        if (node.argument.type === "Identifier") reference(node.argument.name, current, true)
        break
    }
    if (isFunction(node)) {
      const anonymousDeclaration = node.type === "FunctionDeclaration" && node.id === null
      const inferredName = inferredNameOf(node, parent)
      const atModuleLevel = scope === moduleScope
      const moduleConstant = !atModuleLevel
        ? undefined
        : node.type === "FunctionDeclaration"
        ? node.id?.name
        : parent !== undefined && constants.has(parent)
        ? inferredName
        : undefined
      const hoisted = isMember(parent) || anonymousDeclaration ? undefined : {
        node: node as FunctionNode & Node,
        inferredName,
        moduleConstant,
        captured: new Set<string>(),
        assigns: new Set<string>(),
        lexical: false,
        declaredAt: node.type === "FunctionDeclaration" ? declaredAt : undefined
      }
      if (hoisted !== undefined) found.push(hoisted)
      enclosing.push({ hoisted, node, depth: depth.get(current)! })
      for (const child of childrenOf(node)) visit(child, node, current, undefined)
      enclosing.pop()
      // A function's own name, and the name it is declared under, are its copy's own too.
      if (hoisted !== undefined) {
        const ownName = (node.type === "ArrowFunctionExpression" ? undefined : node.id?.name) ?? hoisted.inferredName
        if (ownName !== undefined && !hoisted.assigns.has(ownName)) hoisted.captured.delete(ownName)
      }
      return
    }
    // A declaration is marked at the start of the body that declares it (through an `export`).
    const exported = node.type === "ExportNamedDeclaration" || node.type === "ExportDefaultDeclaration"
    const bodyStart = exported ? declaredAt : bodyStartOf(node, prologue)
    for (const child of childrenOf(node)) visit(child, node, current, bodyStart)
  }
  visit(program, undefined, moduleScope, undefined)
  // A declaration the rewrite cannot mark where it is declared (one in a `switch` case) is left as it is.
  return found.filter((hoisted) =>
    !hoisted.lexical && (hoisted.node.type !== "FunctionDeclaration" || hoisted.declaredAt !== undefined)
  )
}

// Where statements may be put at the start of a body, after its directives (`"use strict"`).
const bodyStartOf = (node: Estree.Node, prologue: number): number | undefined => {
  if (node.type !== "Program" && node.type !== "BlockStatement" && node.type !== "StaticBlock") return undefined
  let start = node.type === "Program" ? prologue : (node as Node).start + 1
  for (const statement of node.body) {
    if (statement.type === "ExpressionStatement" && "directive" in statement) start = (statement as unknown as Node).end
    else break
  }
  return start
}

// The names of the captured variables, and a reader of their values. An array, not an object literal: V8 names
// anonymous functions after the property names around them, and the original's frames would read
// `map.closure.helper.helper` rather than what they read without the rewrite.
const capturedReader = (hoisted: Hoisted): string =>
  hoisted.captured.size === 0
    ? "[], undefined"
    : `${JSON.stringify([...hoisted.captured])}, () => [${[...hoisted.captured].join(", ")}]`

/**
 * The module `code` (JavaScript, with `map` its source map) with its functions hoisted, as JavaScript with an
 * inline source map; `file` names the module in the functions' ids. Unchanged when it has no function to
 * hoist, or is not an ES module.
 *
 * @since 0.1.0
 */
export const rewrite = (code: string, map: string, file: string): string => {
  let program: Estree.Program
  try {
    program = Acorn.parse(code, { ecmaVersion: "latest", sourceType: "module" }) as unknown as Estree.Program
  } catch {
    // Not a module esbuild can leave as it is: esbuild reports what is wrong with it.
    return code
  }
  const isModule = program.body.some((statement) =>
    statement.type === "ImportDeclaration" || statement.type.startsWith("Export")
  )
  // A `#!` line stays first.
  const prologue = code.startsWith("#!") ? code.indexOf("\n") + 1 : 0
  const functions = isModule ? analyse(program, prologue) : []
  if (functions.length === 0) return code

  const splice = SourceSplice.make(code, map)
  const ids = new Set<string>()
  const idOf = (node: Node): string => {
    const at = splice.originalPosition(node.start)
    const base = `${file}:${at.line}:${at.column + 1}`
    let id = base
    for (let n = 2; ids.has(id); n++) id = `${base}#${n}`
    ids.add(id)
    return id
  }
  const marks = functions.map((hoisted, index) => ({ hoisted, index, id: idOf(hoisted.node) }))

  // The original, marked: an expression is wrapped where it is, a declaration is marked at the start of the body
  // that declares it (declarations are hoisted, so it exists there).
  // `nesting` orders the ends of wrappers that end together: the inner one (which starts later) first.
  const edits: Array<{ readonly at: number; readonly text: string; readonly order: number; readonly nesting: number }> =
    []
  for (const { hoisted, id } of marks) {
    const { node } = hoisted
    const extra = `${capturedReader(hoisted)}, ${JSON.stringify([...hoisted.assigns])}`
    if (node.type === "FunctionDeclaration") {
      edits.push({
        at: hoisted.declaredAt!,
        text: `;${runtime}.closure(${JSON.stringify(id)}, ${node.id!.name}, ${extra});`,
        order: 0,
        nesting: 0
      })
    } else {
      // An anonymous function keeps the name it would have taken where it is written.
      const key = hoisted.inferredName === undefined ? undefined : JSON.stringify(hoisted.inferredName)
      // In parentheses: `new function() {…}` must stay a construction of the function.
      edits.push({
        at: node.start,
        text: `(${runtime}.closure(${JSON.stringify(id)}, ${key === undefined ? "" : `{ ${key}: `}`,
        order: 1,
        nesting: 0
      })
      edits.push({
        at: node.end,
        text: `${key === undefined ? "" : ` }[${key}]`}, ${extra}))`,
        order: -1,
        nesting: -node.start
      })
    }
  }
  // At one position: what closes an enclosing wrapper, then declarations' marks, then what opens a wrapper.
  edits.sort((a, b) => a.at - b.at || a.order - b.order || a.nesting - b.nesting)
  splice.copy(0, prologue)
  splice.text(`import { UserFunctions as ${runtime} } from "@kindling/app";`)
  let position = prologue
  for (const edit of edits) {
    splice.copy(position, edit.at)
    splice.text(edit.text)
    position = edit.at
  }
  splice.copy(position, code.length)

  // The copies, each in a factory given the captured variables; a module-level constant is its own copy.
  for (const { hoisted, id, index } of marks) {
    const { node } = hoisted
    const factory = `__kindling_hoisted${index}`
    const captured = hoisted.captured.size === 0
      ? ""
      : `let { ${[...hoisted.captured].join(", ")} } = __kindling_captured;`
    splice.text(`\nfunction ${factory}(__kindling_captured) {${captured}`)
    if (hoisted.moduleConstant !== undefined) {
      splice.text(`return ${hoisted.moduleConstant};`)
    } else if (node.type === "FunctionDeclaration") {
      splice.copy(node.start, node.end)
      splice.text(`;return ${node.id!.name};`)
    } else if (hoisted.inferredName !== undefined) {
      splice.text(`const ${hoisted.inferredName} = `)
      splice.copy(node.start, node.end)
      splice.text(`;return ${hoisted.inferredName};`)
    } else {
      splice.text("return ")
      splice.copy(node.start, node.end)
      splice.text(";")
    }
    splice.text(`}\n${runtime}.hoist(${JSON.stringify(id)}, ${factory});`)
  }
  return splice.withInlineMap()
}

/**
 * `rewrite` for a source file that esbuild loads with `loader`; `file` names it in the functions' ids.
 *
 * @since 0.1.0
 */
export const rewriteFile = (source: string, path: string, loader: Esbuild.Loader, file: string): string => {
  const { code, map } = Esbuild.transformSync(source, {
    loader,
    sourcefile: path,
    sourcemap: "external",
    sourcesContent: true,
    format: "esm",
    target: "node20",
    platform: "node"
  })
  return rewrite(code, map, file)
}
