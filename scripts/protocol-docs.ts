// Renders docs/protocol.md and docs/protocol.schema.json from the schemas of @kindling/protocol, so the
// reference can never drift from the code (a test compares the committed files with a fresh rendering).
import { Catalogue, Envelope, Errors, States } from "@kindling/protocol"
import { JSONSchema, Option, Schema, SchemaAST as AST } from "effect"

type AnySchema = Schema.Schema<any, any, never>
type MessageClass = AnySchema & {
  readonly fields: Record<string, Schema.Schema.All | Schema.PropertySignature.All>
  readonly _tag?: string
  readonly success?: AnySchema
  readonly failure?: AnySchema
}

const identifierOf = (ast: AST.AST): string | undefined => {
  const own = Option.getOrUndefined(AST.getIdentifierAnnotation(ast))
  if (own !== undefined) return own
  return ast._tag === "Transformation" ? Option.getOrUndefined(AST.getIdentifierAnnotation(ast.to)) : undefined
}

const descriptionOf = (ast: AST.AST): string | undefined => {
  const own = Option.getOrUndefined(AST.getDescriptionAnnotation(ast))
  if (own !== undefined) return own
  return ast._tag === "Transformation" ? Option.getOrUndefined(AST.getDescriptionAnnotation(ast.to)) : undefined
}

const anchor = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, "-")

// Types that get their own section; everything else is spelled out where it is used.
const named = new Map<string, { readonly ast: AST.AST; readonly fields: MessageClass["fields"] | undefined }>()
const primitiveNames: Record<string, string> = {
  Int: "int",
  NonNegativeInt: "int ≥ 0",
  Finite: "number",
  NonNegative: "int ≥ 0",
  Bytes: "bytes",
  Uint8ArrayFromSelf: "bytes"
}
const enumNames = new Set(Object.keys(States.all))
const messageTags = new Set(
  [...Catalogue.conversations.map((c) => c.union), ...Catalogue.replies].flatMap((union) =>
    Catalogue.members(union).map((m) => (m as MessageClass)._tag!)
  )
)

// Effect's own descriptions ("a string", "Option<Int>") say nothing the type column does not.
const isOwnDescription = (text: string | undefined): text is string =>
  text !== undefined && !/^(a|an) [a-z]/.test(text) && !text.startsWith("Option<")

const typeOf = (ast: AST.AST, schema?: Schema.Schema.All): string => {
  const id = identifierOf(ast)
  if (id !== undefined) {
    if (primitiveNames[id] !== undefined) return primitiveNames[id]
    if (enumNames.has(id) || messageTags.has(id)) return `[${id}](#${anchor(id)})`
    if (/^[A-Z]\w*$/.test(id)) {
      if (!named.has(id)) {
        named.set(id, { ast, fields: hasFields(schema) ? (schema as MessageClass).fields : undefined })
        // Register nested named types as well, so each is documented once.
        if (hasFields(schema)) fieldsOf(schema as MessageClass)
        else structureOf(ast)
      }
      return `[${id}](#${anchor(id)})`
    }
  }
  return structureOf(ast)
}

const hasFields = (schema: Schema.Schema.All | undefined): boolean => {
  const fields = (schema as Partial<MessageClass> | undefined)?.fields
  return fields !== undefined && Object.keys(fields).length > 0
}

// How a type is built, ignoring its own name.
const structureOf = (ast: AST.AST): string => {
  switch (ast._tag) {
    case "Transformation":
      return typeOf(ast.from)
    case "Refinement": {
      const inner = typeOf(ast.from)
      const description = Option.getOrUndefined(AST.getDescriptionAnnotation(ast))
      return description !== undefined && description.startsWith("a string at least")
        ? `${inner} (non-empty)`
        : inner
    }
    case "StringKeyword":
      return "string"
    case "NumberKeyword":
      return "number"
    case "BooleanKeyword":
      return "boolean"
    case "UnknownKeyword":
    case "AnyKeyword":
      return "any"
    case "NeverKeyword":
      return "never"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Union":
      return ast.types.map((t) => typeOf(t)).join(" \\| ")
    case "TupleType":
      if (ast.elements.length === 0 && ast.rest.length === 1) return `Array<${typeOf(ast.rest[0]!.type)}>`
      return `[${ast.elements.map((e) => typeOf(e.type)).join(", ")}]`
    case "TypeLiteral":
      if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 1) {
        return `map<string, ${typeOf(ast.indexSignatures[0]!.type)}>`
      }
      return `{ ${ast.propertySignatures.map((p) => `${String(p.name)}: ${typeOf(p.type)}`).join("; ")} }`
    case "Declaration":
      return "bytes"
    case "Suspend":
      return typeOf(ast.f())
    default:
      return ast._tag
  }
}

interface FieldRow {
  readonly name: string
  readonly type: string
  readonly note: string
}

const fieldsOf = (cls: Pick<MessageClass, "fields">): Array<FieldRow> =>
  Object.entries(cls.fields).filter(([name]) => name !== "_tag").map(([name, field]) => {
    if (Schema.isPropertySignature(field)) {
      const ast = field.ast as unknown as
        | { readonly _tag: "PropertySignatureDeclaration"; readonly type: AST.AST; readonly isOptional: boolean }
        | { readonly _tag: "PropertySignatureTransformation"; readonly from: { type: AST.AST; isOptional: boolean } }
      const side = ast._tag === "PropertySignatureTransformation" ? ast.from : ast
      return { name, type: typeOf(side.type), note: side.isOptional ? "may be absent" : "" }
    }
    const schema = field as AnySchema
    const isOption = schema.ast._tag === "Transformation" &&
      descriptionOf(schema.ast.to)?.startsWith("Option<") === true
    const description = identifierOf(schema.ast) === undefined ? descriptionOf(schema.ast) : undefined
    return {
      name,
      type: typeOf(schema.ast, schema),
      note: isOption ? "null when absent" : isOwnDescription(description) ? description : ""
    }
  })

const fieldTable = (rows: ReadonlyArray<FieldRow>): Array<string> =>
  rows.length === 0
    ? ["No fields."]
    : [
      "| field | type | notes |",
      "|---|---|---|",
      ...rows.map((row) => `| \`${row.name}\` | ${row.type} | ${row.note.replace(/\|/g, "\\|")} |`)
    ]

const errorNames = (failure: AnySchema | undefined): string => {
  if (failure === undefined || failure.ast._tag === "NeverKeyword") return "—"
  const members = failure.ast._tag === "Union" ? failure.ast.types : [failure.ast]
  return members.map((m) => `[${identifierOf(m)}](#${anchor(identifierOf(m)!)})`).join(", ")
}

const finishedHelpers: Record<string, ReadonlyArray<[string, (state: any) => boolean]>> = {
  WorkerState: [["finished", States.isWorkerFinished]],
  DriverState: [["finished", States.isDriverFinished], ["reportable by a worker", States.isDriverReportable]],
  ApplicationState: [["finished", States.isApplicationFinished]],
  ExecutorState: [["finished", States.isExecutorFinished]],
  TaskState: [["finished", States.isTaskFinished], ["failed", States.isTaskFailed]]
}

const envelopeMembers = (Envelope.Envelope.ast as AST.Union).types

export const renderMarkdown = (): string => {
  named.clear()
  const out: Array<string> = []
  const push = (...lines: Array<string>) => out.push(...lines)

  // Render the messages first: that is what collects the named payload types.
  const conversations: Array<string> = []
  for (const conversation of Catalogue.conversations) {
    conversations.push(`### ${conversation.title}`, "", conversation.description, "")
    conversations.push(
      conversation.endpoint === undefined
        ? "Sent by a role to itself; never on a connection."
        : `Received by the \`${conversation.endpoint}\` endpoint.`,
      ""
    )
    for (const member of Catalogue.members(conversation.union) as ReadonlyArray<MessageClass>) {
      const tag = member._tag!
      conversations.push(`#### ${tag}`, "")
      conversations.push(`${conversation.from} → ${conversation.to}. ${descriptionOf(member.ast) ?? ""}`.trim(), "")
      if (member.success !== undefined) {
        conversations.push(
          `**ask** → reply ${typeOf(member.success.ast, member.success)}; errors: ${errorNames(member.failure)}`,
          ""
        )
      } else {
        conversations.push("**send** (one-way)", "")
      }
      conversations.push(...fieldTable(fieldsOf(member)), "")
    }
  }
  const replies: Array<string> = []
  for (const union of Catalogue.replies) {
    for (const member of Catalogue.members(union) as ReadonlyArray<MessageClass>) {
      replies.push(`#### ${member._tag}`, "", descriptionOf(member.ast) ?? "", "", ...fieldTable(fieldsOf(member)), "")
    }
  }
  const errors: Array<string> = []
  for (const [name, error] of Object.entries(Errors.all)) {
    errors.push(`### ${name}`, "", descriptionOf(error.ast) ?? "", "", ...fieldTable(fieldsOf(error as never)), "")
  }
  const envelope: Array<string> = []
  for (const member of envelopeMembers) {
    const id = identifierOf(member)!
    const literal = member as AST.TypeLiteral
    envelope.push(`#### ${id}`, "", descriptionOf(member) ?? "", "")
    envelope.push(
      "| field | type |",
      "|---|---|",
      ...literal.propertySignatures.map((p) => `| \`${String(p.name)}\` | ${typeOf(p.type)} |`),
      ""
    )
  }
  const types: Array<string> = []
  const done = new Set<string>()
  while (done.size < named.size) {
    for (const [name, { ast, fields }] of [...named]) {
      if (done.has(name)) continue
      done.add(name)
      const description = descriptionOf(ast)
      types.push(`### ${name}`, "", isOwnDescription(description) ? description : "", "")
      const literal = ast._tag === "Transformation" && ast.from._tag === "TypeLiteral" ? ast.from : undefined
      types.push(
        ...(fields !== undefined
          ? fieldTable(fieldsOf({ fields }))
          : literal !== undefined && literal.indexSignatures.length === 0
          ? fieldTable(
            literal.propertySignatures.map((p) => ({ name: String(p.name), type: typeOf(p.type), note: "" }))
          )
          : [structureOf(ast)]),
        ""
      )
    }
  }

  push(
    "# Kindling wire protocol",
    "",
    "Generated from the schemas of `@kindling/protocol` by `pnpm docs`; do not edit by hand.",
    `Protocol version ${Envelope.protocolVersion}. The messages follow Spark 3.3's standalone deploy protocol; ` +
      "names are Spark's except where noted.",
    "",
    "## Contents",
    "",
    "- [Frames and envelopes](#frames-and-envelopes)",
    "- [Handshake](#handshake)",
    "- [Messages](#messages), by conversation",
    "- [Replies](#replies)",
    "- [Payload types](#payload-types)",
    "- [State enums](#state-enums)",
    "- [Errors](#errors)",
    "",
    "## Frames and envelopes",
    "",
    "A connection is a stream of frames. A frame is a 4-byte big-endian unsigned length, then that many bytes: one",
    "envelope encoded as standard MessagePack (maps with string keys, `bin` for bytes, `nil` for absent values;",
    "no extension types). The length counts the payload only. Each side refuses frames longer than its",
    `maximum (default ${Envelope.defaultMaxFrameSize} bytes, 128 MiB): a sender fails the send or ask with`,
    "`FrameTooLarge` without writing; a receiver answers `reject` with `FrameTooLarge` and closes, since the",
    "stream cannot be resynchronised. A frame that is not a valid envelope is logged as `MalformedFrame` and",
    "dropped; the connection goes on.",
    "",
    "Every envelope is a map whose `_tag` says its kind. Message bodies are the messages' schema encodings:",
    "maps with the message's `_tag` and its fields, optional values as `nil`. A map key `__proto__` is read",
    "as `__proto_` (the decoder refuses to touch object prototypes), so no key of a record may be `__proto__`.",
    "",
    "- `send`: a one-way message to the endpoint `to`.",
    "- `ask`: a request with an `id` unique on its connection; answered by exactly one `reply` (encoded with",
    "  the request's reply type) or `failure` (one of the request's errors, or an RpcEnv error such as",
    "  `EndpointNotFound` or `MalformedFrame`). An asker that gives up (`AskTimeout`) ignores a late answer.",
    "- `from` is the sender's listening address, or `nil` for a node that accepts no connections; replies to",
    "  such a node go back over the connection it opened.",
    "",
    "Nodes keep one connection per pair and use it in both directions. Endpoints are told when a peer connects",
    "(after the handshake) and when its connection closes.",
    "",
    ...envelope,
    "## Handshake",
    "",
    "The dialling node writes `hello` first. Nothing but handshake envelopes may flow until the listener writes",
    "`welcome`; a `send` or `ask` before that is never delivered: the listener answers `reject` with",
    "`AuthenticationFailed` and closes.",
    "",
    "1. Dialler → listener: `hello { version, address, nonce }`. `nonce` (32 random bytes) is present iff the",
    "   dialler has a shared secret.",
    "2. If the versions differ, the listener answers `reject` with `ProtocolVersionMismatch` and closes.",
    "3. Without a secret on either side the listener answers `welcome`. If only one side has a secret, the side",
    "   that notices answers `reject` with `AuthenticationFailed` and closes.",
    "4. With secrets: listener → dialler `challenge { nonce: Ns, proof: HMAC-SHA256(secret, \"kindling-server\" ‖",
    "   Nc ‖ Ns) }`. The dialler checks the proof, then sends `proof { proof: HMAC-SHA256(secret,",
    "   \"kindling-client\" ‖ Ns ‖ Nc) }`; the listener checks it and answers `welcome`. A wrong proof on either",
    "   side ends in `reject` with `AuthenticationFailed`, reported by both nodes. The labels differ, so one",
    "   side's proof is useless as the other's.",
    "5. A listener drops a connection whose handshake does not complete within its handshake timeout",
    "   (default 10 s).",
    "",
    "## Messages",
    "",
    "Grouped by conversation: who sends, who receives, whether it is a one-way `send` or an `ask` with its reply",
    "type and errors. Asks to a master that is not ALIVE fail with `MasterNotAlive` where listed.",
    "",
    ...conversations,
    "## Replies",
    "",
    "Reply messages of asks (asks answered with a plain value list that value's type).",
    "",
    ...replies,
    "## Payload types",
    "",
    ...types,
    "## State enums",
    "",
    ...Object.entries(States.all).flatMap(([name, schema]) => {
      const helpers = finishedHelpers[name] ?? []
      return [
        `### ${name}`,
        "",
        descriptionOf(schema.ast) ?? "",
        "",
        `| value |${helpers.map(([label]) => ` ${label} |`).join("")}`,
        `|---|${helpers.map(() => "---|").join("")}`,
        ...schema.literals.map((value) =>
          `| \`${value}\` |${helpers.map(([, is]) => ` ${is(value) ? "yes" : ""} |`).join("")}`
        ),
        ""
      ]
    }),
    "## Errors",
    "",
    "Errors that cross the wire, as `failure` or `reject` bodies: maps with `_tag` and the fields below.",
    "",
    ...errors
  )
  return out.join("\n").replace(/\n{3,}/g, "\n\n")
}

export const renderJsonSchema = (): string => {
  const messages = Catalogue.conversations.map((c) => c.union)
  const schema = JSONSchema.make(
    Schema.Struct({
      envelope: Envelope.Envelope,
      message: Schema.Union(...messages),
      reply: Schema.Union(...Catalogue.replies),
      error: Schema.Union(...Object.values(Errors.all))
    })
  ) as { $defs: Record<string, unknown>; properties: Record<string, unknown> }
  const document = {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: `Kindling wire protocol, version ${Envelope.protocolVersion}`,
    description: "A frame's payload is an Envelope (MessagePack). Message bodies are Message values, replies " +
      "are Reply values or the reply types in docs/protocol.md, failures are Error values.",
    $ref: "#/$defs/Envelope",
    $defs: {
      ...schema.$defs,
      Envelope: schema.properties.envelope,
      Message: schema.properties.message,
      Reply: schema.properties.reply,
      Error: schema.properties.error
    }
  }
  return `${JSON.stringify(document, null, 2)}\n`
}
