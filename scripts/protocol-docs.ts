// Renders docs/protocol.md and docs/protocol.schema.json from the schemas of @kindling/protocol, and the inputs of
// each role's core from the schemas of its package, so the reference can never drift from the code (a test
// compares the committed files with a fresh rendering).
import { AppClientInputs, DriverInputs } from "@kindling/driver"
import { ExecutorInputs } from "@kindling/executor"
import { KernelInputs } from "@kindling/kernel"
import { MasterInputs } from "@kindling/master"
import { Catalogue, Descriptions, Envelope, Errors, States, TaskPlan } from "@kindling/protocol"
import { WorkerInputs } from "@kindling/worker"
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

// Where a heading's link goes, as GitHub makes it: lower case, punctuation dropped, spaces made hyphens.
const anchor = (heading: string) => heading.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-")

// Types that get their own section; everything else is spelled out where it is used.
const named = new Map<string, { readonly ast: AST.AST; readonly fields: MessageClass["fields"] | undefined }>()
const primitiveNames: Record<string, string> = {
  Int: "int",
  NonNegativeInt: "int ≥ 0",
  Megabytes: "int ≥ 0, MB",
  ByteCount: "int ≥ 0, bytes",
  Finite: "number",
  NonNegative: "int ≥ 0",
  Bytes: "bytes",
  Uint8ArrayFromSelf: "bytes"
}
const enumNames = new Set(Object.keys(States.all))
const errorIds = new Set(Object.keys(Errors.all))
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
    // A declared type is not data (an Exit, a value of the process's own): named only, described where it is used.
    if (ast._tag === "Declaration") return `\`${id}\``
    if (enumNames.has(id) || messageTags.has(id) || errorIds.has(id)) return `[${id}](#${anchor(id)})`
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
    case "UndefinedKeyword":
      return "undefined"
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
        | {
          readonly _tag: "PropertySignatureDeclaration"
          readonly type: AST.AST
          readonly isOptional: boolean
          readonly annotations: AST.Annotations
        }
        | { readonly _tag: "PropertySignatureTransformation"; readonly from: { type: AST.AST; isOptional: boolean } }
      const side = ast._tag === "PropertySignatureTransformation" ? ast.from : ast
      const description = ast._tag === "PropertySignatureDeclaration"
        ? Option.getOrUndefined(AST.getDescriptionAnnotation(ast))
        : undefined
      const note = [side.isOptional ? "may be absent" : undefined, description].filter((text) => text !== undefined)
      return { name, type: typeOf(side.type), note: note.join("; ") }
    }
    const schema = field as AnySchema
    const isOption = schema.ast._tag === "Transformation" &&
      descriptionOf(schema.ast.to)?.startsWith("Option<") === true
    const description = identifierOf(schema.ast) === undefined || schema.ast._tag === "Declaration"
      ? descriptionOf(schema.ast)
      : undefined
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

// Each role's core: its name in the catalogue's conversations, where it lives, and its local inputs.
const roles = [
  { role: "Master", core: "MasterCore", inputs: "MasterInputs", of: "@kindling/master", local: MasterInputs.Local },
  { role: "Worker", core: "WorkerCore", inputs: "WorkerInputs", of: "@kindling/worker", local: WorkerInputs.Local },
  { role: "Driver", core: "DriverCore", inputs: "DriverInputs", of: "@kindling/driver", local: DriverInputs.Local },
  {
    role: "App client",
    core: "AppClientCore",
    inputs: "AppClientInputs",
    of: "@kindling/driver",
    local: AppClientInputs.Local
  },
  {
    role: "Executor",
    core: "ExecutorCore",
    inputs: "ExecutorInputs",
    of: "@kindling/executor",
    local: ExecutorInputs.Local
  }
] as const

// An input's heading, description and fields; inputs are tagged structs, so their tag is in their type literal.
const inputTables = (union: Catalogue.MessageUnion): Array<string> =>
  Catalogue.members(union).flatMap((input) => {
    const tag = (input.ast as AST.TypeLiteral).propertySignatures.find((p) => p.name === "_tag")!.type as AST.Literal
    return [
      `#### ${String(tag.literal)}`,
      "",
      descriptionOf(input.ast) ?? "",
      "",
      ...fieldTable(fieldsOf(input as unknown as Pick<MessageClass, "fields">)),
      ""
    ]
  })

const dataEnvelopeIds = new Set((Envelope.DataEnvelope.ast as AST.Union).types.map((member) => identifierOf(member)))
const envelopeMembers = (Envelope.Envelope.ast as AST.Union).types
const controlEnvelopes = envelopeMembers.filter((member) => !dataEnvelopeIds.has(identifierOf(member)))
const dataEnvelopes = envelopeMembers.filter((member) => dataEnvelopeIds.has(identifierOf(member)))

export const renderMarkdown = (): string => {
  named.clear()
  const out: Array<string> = []
  const push = (...lines: Array<string>) => out.push(...lines)

  // Render the messages first: that is what collects the named payload types.
  const conversations: Array<string> = []
  for (const conversation of Catalogue.conversations) {
    conversations.push(`### ${conversation.title}`, "", conversation.description, "")
    conversations.push(`Received by the \`${conversation.endpoint}\` endpoint.`, "")
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
  const inputs: Array<string> = ["### Kernel inputs", "", "What the kernel's shell feeds every role's core.", ""]
  inputs.push(...inputTables(KernelInputs.Input))
  for (const { core, inputs: module, local, of, role } of roles) {
    const received = Catalogue.conversations.filter((conversation) => conversation.to === role)
    if (received.length === 0) throw new Error(`no conversation of the catalogue goes to ${role}`)
    inputs.push(
      `### ${role}`,
      "",
      `\`${core}\` of \`${of}\`. It is told, as \`Receive\`, the messages of ` +
        `${received.map(({ title }) => `[${title}](#${anchor(title)})`).join(", ")}; the other ` +
        `[kernel inputs](#kernel-inputs); and these local inputs (\`${module}\`):`,
      "",
      ...inputTables(local)
    )
  }
  const envelopeTables = (members: ReadonlyArray<AST.AST>): Array<string> =>
    members.flatMap((member) => [
      `#### ${identifierOf(member)!}`,
      "",
      descriptionOf(member) ?? "",
      "",
      "| field | type |",
      "|---|---|",
      ...(member as AST.TypeLiteral).propertySignatures.map((p) =>
        `| \`${String(p.name)}\` | ${typeOf(p.type)}${p.isOptional ? " (may be absent)" : ""} |`
      ),
      ""
    ])
  // A task's plan, result operation and outcome: one table per union member, named by its `_tag`.
  const literalOf = (ast: AST.AST): AST.TypeLiteral | undefined =>
    ast._tag === "TypeLiteral"
      ? ast
      : ast._tag === "Transformation"
      ? literalOf(ast.from)
      : ast._tag === "Suspend"
      ? literalOf(ast.f())
      : undefined
  const tagsOf = (literal: AST.TypeLiteral): string => {
    const tag = literal.propertySignatures.find((p) => p.name === "_tag")?.type
    return tag === undefined ? "" : structureOf(tag).replace(/"/g, "`")
  }
  const memberTables = (schema: Schema.Schema.All, level = "####"): Array<string> => {
    const members = schema.ast._tag === "Union" ? schema.ast.types : [schema.ast]
    return members.flatMap((member) => {
      const literal = literalOf(member)
      if (literal === undefined) return []
      const rows = literal.propertySignatures.filter((p) => p.name !== "_tag")
      return [
        `${level} ${tagsOf(literal) || identifierOf(member) || "Task"}`,
        "",
        isOwnDescription(descriptionOf(member)) ? descriptionOf(member)! : "",
        "",
        ...(rows.length === 0
          ? ["No fields besides `_tag`."]
          : fieldTable(rows.map((p) => ({ name: String(p.name), type: typeOf(p.type), note: "" })))),
        ""
      ]
    })
  }
  const tasks = [
    "### Task",
    "",
    ...memberTables(TaskPlan.Task).slice(2),
    "### Plan nodes",
    "",
    "`plan` is a tree: sources at its leaves (`Slice`, `Range`, `TextSplit`), operators above them, each with its",
    "`child`. An operator's function is called with its usual arguments, then the function's `env`.",
    "",
    ...memberTables(TaskPlan.PlanNode),
    "### Result operations",
    "",
    ...memberTables(TaskPlan.ResultOp),
    "### Function references",
    "",
    "A `NamedFunction` names a function the app module (the executor's `--app`) exports, or registers with",
    "`App.register`; a `SourceFunction` is a self-contained JavaScript function expression, evaluated in the",
    "global scope. A `ClosureFunction` is a function of the app's sources that `kindling submit` hoisted when it",
    "bundled the app: the app module registers, under `id` (where the function is written, `file:line:column`), a",
    "factory taking an object of the local variables the function refers to and returning the function. The",
    "executor calls it with `captured` and, for each of `functions`, that reference made into its function, then",
    "calls the result as any other (its `env` last). A task thread imports the app module before the first task",
    "that calls one of its functions or may read records of its registered classes (from a shuffle, a persisted",
    "partition, a checkpoint or a broadcast variable); tasks that need neither run without it.",
    "",
    ...memberTables(TaskPlan.FunctionRef),
    "### Outcomes",
    "",
    "A `TaskStatus` with state `FINISHED` carries an encoded `TaskResult` in `data`; with `FAILED` or",
    "`KILLED`, an encoded `TaskFailure`.",
    "",
    ...memberTables(TaskPlan.TaskOutcome)
  ]
  const envelope = envelopeTables(controlEnvelopes)
  const dataEnvelope = envelopeTables(dataEnvelopes)
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
            literal.propertySignatures.map((p) => {
              const note = descriptionOf(p.type)
              return { name: String(p.name), type: typeOf(p.type), note: isOwnDescription(note) ? note : "" }
            })
          )
          : [structureOf(ast)]),
        ""
      )
    }
  }

  push(
    "# Kindling wire protocol",
    "",
    "Generated from the schemas of `@kindling/protocol` by `pnpm run docs`; do not edit by hand.",
    `Protocol version ${Envelope.protocolVersion}. The messages follow Spark 3.3's standalone deploy protocol; ` +
      "names are Spark's except where noted.",
    "",
    "## Contents",
    "",
    "- [Frames and envelopes](#frames-and-envelopes)",
    "- [Handshake](#handshake)",
    "- [Data connections](#data-connections): streamed transfers of blocks",
    "- [Messages](#messages), by conversation",
    "- [Replies](#replies)",
    "- [Inputs of each role](#inputs-of-each-role): what each role's core is told, from the wire and by itself",
    "- [Artifacts](#artifacts): how an app reaches drivers and executors",
    "- [Commands](#commands): what a worker runs for a driver or an executor",
    "- [Securing a cluster](#securing-a-cluster)",
    "- [Checking a node](#checking-a-node): the conformance kit, and a client in Python written from this page",
    "- [Web UIs and HTTP](#web-uis-and-http): what each node answers over HTTP",
    "- [Tasks](#tasks): what `TaskDescription.serializedTask` holds",
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
    "dropped; the connection goes on. If it is an `ask` whose `id` can be read, the node also answers it with a",
    "`failure` carrying the `MalformedFrame` (the ask is not carried out), so the asker does not wait for its",
    "timeout. A `MalformedFrame` reason is one line naming the first problem and where it is:",
    "`RequestSubmitDriver.driverDescription.mem: Expected number, actual \"x\"`, or for an envelope",
    "`not an envelope: id must be a non-negative safe integer (≤ 2^53 − 1), got -1`.",
    "",
    "**Integers** are MessagePack integers of any width (positive and negative fixint, int8 to int64, uint8 to",
    "uint64): a reader accepts a 64-bit integer wherever an integer is expected. Kindling reads one as a number",
    "when it is a safe integer (|n| ≤ 2^53 − 1), and refuses a larger one with `MalformedFrame` (\"… is not a safe",
    "integer\"). It writes every whole number as an integer, never as a float: beyond 32 bits as int64. Floats",
    "(float32 or float64) appear only in fields of type `number`, and a whole number there may come as an",
    "integer.",
    "",
    "Every envelope is a map whose `_tag` says its kind. Message bodies are the messages' schema encodings:",
    "maps with the message's `_tag` and its fields, optional values as `nil`. A map key `__proto__` is read",
    "as `__proto_` (the decoder refuses to touch object prototypes), so no key of a record may be `__proto__`.",
    "",
    "- `send`: a one-way message to the endpoint `to`. A `send` to an endpoint the node does not have, or whose",
    "  body does not decode as one of that endpoint's messages, is dropped with a warning in the receiving",
    "  node's log; the sender is told nothing (a one-way message has nowhere to put an answer).",
    "- `ask`: a request with an `id` unique on its connection; answered by exactly one `reply` (encoded with",
    "  the request's reply type) or `failure` (one of the request's errors, or an RpcEnv error such as",
    "  `EndpointNotFound` or `MalformedFrame`). An asker that gives up (`AskTimeout`) ignores a late answer. A",
    "  repeated `id` on the same connection (among its last 4096 asks) is ignored, so a duplicated frame is",
    "  carried out once.",
    "- A `reply` body is encoded with the request's reply type like any message: when that type is a message",
    "  (`SubmitDriverResponse`, `MasterStateResponse`, …; see [Replies](#replies)) it is a map **with its",
    "  `_tag`**; when it is a plain value (a boolean, say) it is that value; an ask with no reply type gets `nil`.",
    "- `from` is the sender's listening address, or `nil` for a node that accepts no connections; replies to",
    "  such a node go back over the connection it opened.",
    "",
    "Nodes keep one connection per pair and use it in both directions. A connection's peer is who its `hello`",
    "says it is: the listener takes the dialler's identity from `hello.address` (the socket's own address only",
    "when that is `nil`), and the dialler knows the listener as the address it dialled. The claim is not",
    "checked beyond the handshake: with a shared secret only members of the cluster can make one. To send to an",
    "address, a node uses the open control connection whose peer is that address, whichever side dialled it,",
    "and dials one only when there is none: so a master answers a worker over the worker's own connection, and",
    "dials back to an advertised address (`RegisterWorker.worker`, an app's driver) only when that connection",
    "has closed or the address is not the one its `hello` gave. A node that advertises an address must",
    "therefore accept connections there. Endpoints are told when a peer connects (after the handshake) and",
    "when its connection closes. Bulk bytes travel on connections of their own, with envelopes of their own:",
    "see [Data connections](#data-connections).",
    "",
    "A quiet control connection is kept open with `ping`s: a node sends one on a connection it has written",
    "nothing on for a quarter of its idle timeout (`kindling.network.timeout`, default 120 s), and closes a",
    "connection on which nothing has arrived for the whole timeout, unless it is waiting for an answer there, or",
    "on which a frame began and did not end within it. So a client skips the `ping`s it reads, and one that",
    "holds a connection without asking anything sends something (a `ping` will do) within every idle timeout.",
    "",
    "Ids (`DriverId`, `AppId`, `WorkerId`, `ExecutorId`, endpoint names) are strings. Kindling generates them",
    "in Spark's formats (`driver-<yyyyMMddHHmmss>-<nnnn>`, `app-<yyyyMMddHHmmss>-<nnnn>`,",
    "`worker-<yyyyMMddHHmmss>-<host>-<port>`), but no receiver checks a format: any string decodes, and an id",
    "a node does not know is answered as unknown (`DriverNotFound`, `AppNotFound`, a worker's log lines).",
    "",
    "For debugging a client of your own, `--conf kindling.rpc.traceDir=<dir>` makes masters, workers and the",
    "submit, status and kill commands write every frame they send or receive to `<dir>/<pid>.jsonl`, with its",
    "MessagePack payload in base64: compare them with what your client writes.",
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
    "",
    "   The bytes: the HMAC key is the secret's UTF-8 encoding, as it is (no hashing, trimming or padding). The",
    "   HMAC message is the plain concatenation of the label's UTF-8 bytes (`kindling-server` or",
    "   `kindling-client`, 15 bytes, no terminator) and the two 32-byte nonces in the order shown, with no",
    "   separators or lengths: 79 bytes. A proof is the 32-byte HMAC-SHA256 output, as `bin`; the two sides",
    "   compare proofs in constant time.",
    "5. A listener drops a connection whose handshake does not complete within its handshake timeout",
    "   (`kindling.rpc.handshakeTimeout`, default 5 s): with a secret, with `reject` and `AuthenticationFailed`.",
    "",
    "Until its `welcome`, a listener reads no frame longer than 8 KiB (handshake envelopes are small): a longer",
    "one is refused with `reject` and `FrameTooLarge`, so an unknown peer cannot make a node hold a large frame.",
    "A listener keeps at most `kindling.rpc.maxHandshakes` connections (default 64) in their handshake, and at",
    "most `kindling.rpc.maxHandshakesPerAddress` (default 32) from one source address that have sent nothing. It",
    "never refuses a new connection for these limits: it closes one still in its handshake to make room, without",
    "a word — one that has sent nothing for at least half a second, from the new connection's address when that",
    "address holds its share, else from the address holding the most, oldest first; only when none is silent the",
    "handshake that has gone longest without a frame. So a dialler must send its `hello` as soon as it connects:",
    "a connection that says nothing is the first to go when connections that say nothing flood the listener.",
    "",
    "## Encryption",
    "",
    "With `kindling.network.crypto.enabled` (which needs `kindling.authenticate` and its secret), every connection",
    "— control and data alike — is encrypted below the frames: everything above, the handshake included, runs",
    "unchanged inside it. Both ends of a connection must have it on.",
    "",
    "1. Each side sends a 40-byte greeting: the 8 bytes `ff 4b 44 4c 45 4e 43 31` (0xff, then `KDLENC1`) and",
    "   the 32 bytes of a fresh X25519 public key. The dialler sends its greeting at once, the listener once it",
    "   has the dialler's. Read as a frame header, the greeting is a length beyond any frame limit: a node that",
    "   does not encrypt refuses it with `reject` and `AuthenticationFailed`; an encrypting listener that gets a",
    "   frame instead of a greeting answers the same in plaintext and closes.",
    "2. Each side computes the X25519 shared secret Z (an all-zero Z ends the connection) and two 32-byte keys,",
    "   HKDF-SHA256 with IKM = Z ‖ the cluster secret's UTF-8 bytes, salt = the dialler's public key ‖ the",
    "   listener's public key, and info = `kindling dialler to listener` for the key of what the dialler sends,",
    "   `kindling listener to dialler` for the other.",
    "3. From then on each side sends records: a 4-byte big-endian length n (1 to 262,144), n bytes of",
    "   AES-256-GCM ciphertext, and the 16-byte tag. The 12-byte nonce is 4 zero bytes and the record's number",
    "   in its direction (from 0) as 8 bytes big-endian; the additional data is the 4 length bytes. A record",
    "   that fails its tag, or a length out of range, ends the connection.",
    "4. Each side's first record carries the 8 greeting bytes: it confirms the keys, so a peer with another",
    "   secret fails there. The plaintext of the following records, concatenated, is the stream of frames;",
    "   record boundaries mean nothing to it.",
    "",
    "The ephemeral keys give forward secrecy; the secret in the key derivation makes the exchange",
    "authenticated (a node in the middle cannot derive the keys). A node seals what it writes in one turn of",
    "its event loop together, in records of at most 256 KiB.",
    "",
    "## Data connections",
    "",
    "Bulk bytes (app artifacts, broadcast values, large task results, shuffle blocks) do not travel as messages.",
    "A node that fetches a block from another opens a *data connection* to the same listener, with the same",
    "handshake: its `hello` says `purpose: \"data\"`, and with a shared secret both sides prove it as on any",
    "connection, so a node that fails the handshake gets nothing. A data connection makes no peer: endpoints are",
    "not told of it, and it never carries `send`, `ask`, `reply` or `failure`; a node drops those on a data",
    "connection, and data envelopes on a control connection. Control frames so never queue behind bulk bytes.",
    "",
    "The dialler fetches, the listener serves. A fetcher carries all its streams from one node on one data",
    "connection, and closes it once it has carried none for a while (default 120 s).",
    "",
    "1. Fetcher → server: `fetch { id, block, offset, window, checksums? }`. The fetcher chooses `id`, unique",
    "   on the connection; `window` is the first credit, in bytes (0 is allowed); `checksums: false` asks for",
    "   chunks without `crc` (see Checksums).",
    "2. The server finds the block by the longest id prefix it serves and asks that prefix's resolver, which may",
    "   decide by the requester (the address in the fetcher's `hello`). It answers `fetchFailed { id, error }`",
    "   with `BlockNotFound` or `TransferRefused` (the latter also for an offset beyond the block's end), or",
    "   sends the bytes from `offset` on as `chunk { id, offset, crc, data }`, in order, each at most the",
    "   server's chunk size (default 256 KiB) and never beyond the credit it has not used.",
    "3. Fetcher → server: `credit { id, bytes }` as the fetcher's consumer takes bytes, so that what is granted",
    "   and not yet taken stays within the stream's window (default 1 MiB).",
    "4. Server → fetcher: `end { id, size }` after the last chunk (at once for an empty block).",
    "5. The fetcher may stop a stream with `cancel { id }`; the server stops sending it, and chunks already on",
    "   their way are ignored. The server may fail it with `fetchFailed` at any point (a block that is no",
    "   longer served is `BlockNotFound`).",
    "",
    "### Flow control and bounds",
    "",
    "A server sends a stream's bytes only within the credit its fetcher granted, and reads the block only as",
    "far as that credit goes. A fetcher grants credit in whole chunks, in batches of half a window, and bounds",
    "the bytes it has granted and not yet handed to its consumers, over all its streams (default 48 MiB) and",
    "over the streams from one node (default 16 MiB); a stream that finds no room waits for it, in the order",
    "streams began waiting. A server writes a chunk only when the unsent bytes of that data connection (default",
    "512 KiB) and of all its data connections (default 16 MiB) leave room for it, and otherwise waits for its",
    "socket buffers to drain. However slow a consumer, neither side holds more than its bounds and a chunk per",
    "stream.",
    "",
    "### Checksums",
    "",
    "`crc` is the CRC-32 of the chunk's `data` (IEEE 802.3, the one zlib computes). The fetcher checks it, that",
    "the chunk starts where the verified bytes end and stays within the credit, and at `end` that `size` is the",
    "offset it reached. A failed check is `BlockCorrupted`: the fetcher cancels the stream and fetches again from",
    "its last verified offset. Kindling writes a chunk with `data` last, `id` and `offset` as uint64, `crc` as",
    "uint32 and `data` as bin32, which a fetcher can read without copying the data; it accepts any other valid",
    "encoding too.",
    "",
    "A fetcher whose consumer checks the bytes end to end itself asks with `checksums: false`; the server then",
    "sends its chunks without `crc` (in the same layout, less that entry), and the fetcher checks placement,",
    "credit and size only. Kindling's reduce tasks fetch shuffle blocks so: each frame of a block carries the",
    "CRC-32 of its records from the map task's write to the reduce task's read, a stronger check than one per",
    "chunk, which would cost both sides another pass over every byte. A chunk without `crc` on a stream that",
    "asked for checksums is `BlockCorrupted`.",
    "",
    "### Resumption",
    "",
    "A lost connection, corrupted bytes or an answer that cannot be decoded end an attempt, not the fetch: the",
    "fetcher waits (default 1 s, doubling each time) and opens a new stream, on a new data connection if the old",
    "one is gone, with `offset` at its last verified byte. After 3 attempts in a row that got no further (an",
    "attempt that made progress starts the count again) it gives up with `TransferFailed`, carrying the last",
    "attempt's error; a failed handshake (`AuthenticationFailed`, `ProtocolVersionMismatch`) is not retried.",
    "`BlockNotFound` and `TransferRefused` end the fetch at once.",
    "",
    ...dataEnvelope,
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
    "## Inputs of each role",
    "",
    "Every role is a core hosted by the kernel's shell (see",
    "[the shape of a role](architecture.md#the-shape-of-a-role)), which is told one input at a time. The kernel's",
    "inputs are the same for every role: among them, each message its endpoint receives. A role's local inputs are",
    "its own: ticks of the timers it set, and what its shell reports back (the outcome of work the core asked for,",
    "what its process was told). Local inputs never cross a connection; they are here to say what drives each",
    "role, not as part of the wire protocol. Every input carries `now`, the time it is handled.",
    "",
    ...inputs,
    "## Artifacts",
    "",
    "An app travels as an artifact: one ES module (`kindling submit` bundles the app into it), named by the",
    "SHA-256 of its bytes and served on the data plane as the block `artifact/<sha256>` (64 lowercase hex",
    "digits). Its URL, `kindling://host:port/artifact/<sha256>/<name>`, names the node that serves it, the block",
    "and the file name to store it under (one path segment, percent-encoded). A node that fetches an artifact",
    "checks its size and SHA-256 before it uses it, and keeps nothing of bytes that do not match.",
    "",
    "1. Cluster deploy mode: the submission client serves the artifact and asks its master",
    "   `RequestUploadArtifact { name, sha256, size }`. The master fetches `artifact/<sha256>` from the asking",
    "   node's listening address (a client that does not listen is refused), checks it, stores it and answers",
    "   `UploadArtifactResponse { url }` with the artifact's URL on the master, which the client puts in",
    "   `DriverDescription.appUrl`. The master serves the artifact while a driver it remembers refers to it, and",
    "   for `kindling.master.artifact.retention` after that; it refuses artifacts over",
    "   `kindling.master.artifact.maxSize` with `ArtifactRejected`.",
    "2. The worker that launches the driver fetches `appUrl` into the driver's directory (`file:` and `http(s):`",
    "   URLs are copied or downloaded instead) and passes the local path as `{{USER_JAR}}`.",
    "3. The driver serves its artifact to its executors: the executor command's `--app` argument is the",
    "   artifact's URL on the driver, and each executor fetches it into its working directory before it",
    "   registers.",
    "",
    "With a shared secret, data connections pass the same handshake as control connections, so only nodes that",
    "know the secret get an artifact; workers hand their secret to the drivers and executors they start in the",
    "environment (`KINDLING_AUTHENTICATE_SECRET`), never on a command line.",
    "",
    "## Commands",
    "",
    "A `Command` (in `DriverDescription.command` and `ApplicationDescription.command`) says how a worker starts",
    "a driver or an executor: `node [nodeOptions…] <mainModule> [arguments…]`, in the runner's own directory,",
    "with `environment` added to the worker's own, stdout and stderr to files there, and, when the description",
    "asks for memory, `--max-old-space-size=<mem>`, `--max-semi-space-size` of 1 MiB per 64 of it (at most 16)",
    "and `MALLOC_ARENA_MAX=2` unless the worker's environment sets it: the memory bounds the whole process.",
    "",
    "`mainModule` must be one of the Kindling installation's entries for that role, resolved from the",
    "worker's installation; a worker runs nothing else, so a description cannot make it run a file or package",
    "of its choosing:",
    "",
    `- driver: ${Descriptions.mainModules.driver.map((m) => `\`${m}\``).join(" or ")}. \`@kindling/driver/main\``,
    "  takes `{{WORKER_URL}} {{USER_JAR}} <masterUrl> <settings JSON> [app args…]` (what `kindling submit",
    "  --deploy-mode cluster` sends: the app artifact runs as a Kindling app with those settings);",
    "  `@kindling/worker/DriverWrapper` takes `{{WORKER_URL}} {{USER_JAR}} [app args…]` and calls the default",
    "  export of the module at `{{USER_JAR}}` with the app arguments (a plain function driver).",
    `- executor: ${Descriptions.mainModules.executor.map((m) => `\`${m}\``).join(" or ")}, with the arguments`,
    "  the driver's application description gives it.",
    "",
    "A master refuses a `RequestSubmitDriver` naming any other module with `DriverLaunchFailed` (no `driverId`:",
    "nothing is recorded). A worker checks again: a `LaunchDriver` naming another module ends the driver `ERROR`",
    "with a `DriverLaunchFailed` exception, a `LaunchExecutor` ends the executor `FAILED` with the",
    "`ExecutorLaunchFailed` text, and either message says which modules are allowed.",
    "",
    "Before starting the process the worker replaces these placeholders in `arguments`, anywhere in an",
    "argument; a placeholder without a value for the role (`{{EXECUTOR_ID}}` for a driver) is left as it is:",
    "",
    "| placeholder | driver | executor |",
    "|---|---|---|",
    "| `{{WORKER_URL}}` | the worker's endpoint URL (`kindling://Worker@host:port`), which the process watches | same |",
    "| `{{USER_JAR}}` | the local path the worker fetched `appUrl` to | — |",
    "| `{{EXECUTOR_ID}}` | — | the executor's id within its app (`execId`) |",
    "| `{{HOSTNAME}}` | — | the worker's host |",
    "| `{{CORES}}` | — | the cores granted (`LaunchExecutor.cores`) |",
    "| `{{APP_ID}}` | — | the application's id |",
    "",
    "Sizes: every memory field of the deploy messages (`mem`, `memory`, `memoryUsed`, `memoryPerExecutorMB`,",
    "`executorMemoryMb`) is a whole number of megabytes (MiB, 2^20 bytes; type `int ≥ 0, MB` below), as in",
    "Spark; sizes of blocks and artifacts are bytes (`int ≥ 0, bytes`); `cores` counts cores.",
    "",
    "## Securing a cluster",
    "",
    "Whoever can send `RequestSubmitDriver` to a master, or `LaunchDriver` and `LaunchExecutor` to a worker, can",
    "make the cluster run an app of their choosing (Spark's CVE-2018-11770 and CVE-2020-9480). So:",
    "",
    "- Give every process of the cluster one shared secret: `--conf kindling.authenticate=true --conf",
    "  kindling.authenticate.secret=<secret>` (or `KINDLING_AUTHENTICATE` and `KINDLING_AUTHENTICATE_SECRET`).",
    "  Every connection, control or data, then passes the handshake above before anything is delivered; the",
    "  REST server wants a bearer token signed with the same secret. Workers hand the secret to the drivers",
    "  and executors they start in the environment, never on a command line.",
    "- A master, worker or REST server that would listen on an address other than loopback without a secret",
    "  refuses to start, with a message saying so. `--conf kindling.authenticate=false`, set explicitly, starts",
    "  it anyway (a trusted network, a firewall in front) and logs a warning. On loopback (`--host 127.0.0.1`,",
    "  a host name that resolves only to loopback) nothing is asked for, for quick starts on one machine.",
    "- The web UIs and metrics are not authenticated (as Spark's by default): bind them to addresses only",
    "  operators reach. Workers only ever start the installation's own entries (see [Commands](#commands)).",
    "",
    "## Checking a node",
    "",
    "`kindling conformance --target kindling://host:port --role master|worker [--secret <secret>]` plays scripted",
    "conversations against one node over TCP and prints a line per check, `pass` or `FAIL` with the reason,",
    "exiting 1 if any failed: the handshake (with the secret when one is given, else without), every ask of the",
    "role's endpoint with a valid body and with an invalid one, envelopes the node must drop or refuse, framing",
    "(a frame split over many writes, two in one write, garbage, an empty frame, one over the limit), 64-bit",
    "integers in ids and bodies (and no whole number written as a float in an answer), and peers that drop a",
    "connection half-way while the node goes on serving. The same checks are `Conformance.run` in",
    "`@kindling/rpc/testing`, over any `Transport`. Play it against a node set aside for it, and an ALIVE",
    "master: on a master it submits a driver no worker can take and kills it, kills every driver, and forgets",
    "completed drivers and apps.",
    "",
    "`examples/python/kindling_client.py` is a client written from this page alone, with Python's standard",
    "library and `msgpack`: it queries a master, runs a plain function module as a driver to `FINISHED` through",
    "`@kindling/worker/DriverWrapper`, and registers a fake worker that heartbeats. Kindling's tests run both",
    "against a real master and worker.",
    "",
    "## Web UIs and HTTP",
    "",
    "Besides its RPC port every node serves HTTP (plain JSON and HTML; no authentication, as Spark's UIs by",
    "default: bind it to an address only operators reach). A node binds its UI port before it registers and",
    "tells others the bound address: a worker in `RegisterWorker.workerWebUiUrl`, a master in",
    "`RegisteredWorker.masterWebUiUrl` (and `MasterChanged`) and `BoundPortsResponse.webUIPort`, an app in",
    "`ApplicationDescription.appUiUrl`. Executors tell their driver where their logs are in",
    "`RegisterExecutor.logUrls` (`stdout`, `stderr`: pages of their worker's UI, which workers hand them in",
    "`KINDLING_LOG_URL_STDOUT`/`KINDLING_LOG_URL_STDERR`).",
    "",
    "| Node (default port) | Endpoints |",
    "|---|---|",
    "| every node | `GET /healthz` (200 `ok`), `GET /readyz` (200, or 503 while not ready: a master not ALIVE, a " +
      "worker not registered), `GET /metrics/prometheus` (Prometheus text format 0.0.4; series named " +
      "`kindling_<role>_…`, tagged `master`, `worker` or `app`) |",
    "| master (8080, `kindling.master.ui.port`) | `GET /json` (Spark's `writeMasterState` keys), " +
      "`GET /app/json/?appId=` (`writeApplicationInfo`), `POST /app/kill/` and `POST /driver/kill/` (form " +
      "fields `id`, `terminate=true`; 303 to `/`, 403 unless the request's `Origin` or `Referer` is the UI " +
      "itself, 405 with `kindling.ui.killEnabled=false`), `GET /metrics/master/prometheus`; pages `/`, " +
      "`/app/?appId=` |",
    "| worker (8081, `kindling.worker.ui.port`) | `GET /json` (`writeWorkerState` keys), `GET /log` and " +
      "`GET /logPage/` with `logType=stdout|stderr` and `driverId`, or `appId` and `executorId` (`offset`, " +
      "`byteLength` in bytes, at most 16 MiB; by default the last 100 KiB; 400 for bad parameters, 404 for an unknown " +
      "runner), `GET /metrics/worker/prometheus`; page `/` |",
    "| app (4040, `kindling.ui.port`) | Spark's monitoring API under `/api/v1/applications` (`/{id}`, `/jobs`, " +
      "`/jobs/{id}`, `/stages`, `/stages/{id}`, `/stages/{id}/{attempt}`, `/stages/{id}/{attempt}/taskList` " +
      "with `offset`, `length`, `sortBy`, `status`, `/executors`, `/allexecutors`, `/storage/rdd`, " +
      "`/storage/rdd/{id}`, `/environment`) with Spark's field names; `GET /events` (server-sent events: " +
      "`data: <version>` whenever the app's status changed, at most twice a second); `POST /jobs/job/kill/` " +
      "(as the master's kills); `GET /metrics/applications/prometheus`; pages `/jobs/`, `/jobs/job/?id=`, " +
      "`/stages/`, `/stages/stage/?id=&attempt=&task.page=&task.pageSize=&task.sort=`, `/storage/`, " +
      "`/storage/rdd/?id=`, `/environment/`, `/executors/` |",
    "",
    "A port that is taken makes a UI try the next ones (`kindling.port.maxRetries`, 16); 0 picks a free port.",
    "An app's UI is up while the app runs (`kindling.ui.enabled=false` turns it off).",
    "",
    "## Tasks",
    "",
    "`TaskDescription.serializedTask` is a `Task` encoded with MessagePack (plain maps, tagged by `_tag`): one",
    "partition's plan and what to make of its records. A third-party executor evaluates the plan lazily, from",
    "its source up, and reports a `TaskStatus` (in `StatusUpdates`) whose `data` is the encoded outcome.",
    "",
    "The app's own values in a task — records, environments, captured values, zero values, results — are",
    "MessagePack with msgpackr's structured-clone extensions (`Map`, `Set`, `Date`, `BigInt`, typed arrays,",
    "`Error`, cycles), and four of Kindling's: 0x21 a broadcast `[id, token]`, 0x22 an accumulator `[id, kind,",
    "name]`, 0x23 the task context (`0`), and 0x24 an instance of a class the app registered",
    "(`App.registerClass`), `[name, fields]`: the reader makes an object of the class registered under `name`",
    "with those fields, without running its constructor. A function, or an instance of a class not registered,",
    "is refused by the writer; an executor's own process, which reads a plan only for its shape, reads such an",
    "instance as its fields.",
    "",
    ...tasks,
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

type JsonSchema = Record<string, any>

export const renderJsonSchema = (): string => {
  const messages = Catalogue.conversations.map((c) => c.union)
  // Every named schema lands in $defs under its identifier, the envelope union as `Envelope` and each envelope
  // as its own (`Send`, `Reply`, …). The unions of bodies are added under names of their own, never over one
  // of those: a $def replaced by a $ref to itself sends validators into a loop.
  const schema = JSONSchema.make(
    Schema.Struct({
      envelope: Envelope.Envelope,
      message: Schema.Union(...messages),
      reply: Schema.Union(...Catalogue.replies),
      error: Schema.Union(...Object.values(Errors.all))
    })
  ) as { $defs: Record<string, JsonSchema>; properties: Record<string, JsonSchema> }
  const defs: Record<string, JsonSchema> = { ...schema.$defs }
  const define = (name: string, definition: JsonSchema) => {
    if (name in defs) throw new Error(`$defs.${name} is a schema of the protocol already`)
    defs[name] = definition
  }
  define("Message", schema.properties.message!)
  define("ReplyMessage", schema.properties.reply!)
  define("Error", schema.properties.error!)
  if (schema.properties.envelope!.$ref !== "#/$defs/Envelope") throw new Error("the Envelope union is not in $defs")
  // What the envelopes carry, by kind: messages in `send` and `ask`, errors in `failure`, `reject` and
  // `fetchFailed`. A reply's body is the request's reply type, which the envelope alone does not tell.
  for (
    const [envelope, field, body] of [
      ["Send", "body", "Message"],
      ["Ask", "body", "Message"],
      ["Failure", "error", "Error"],
      ["Reject", "error", "Error"],
      ["FetchFailed", "error", "Error"]
    ] as const
  ) {
    defs[envelope]!.properties[field] = { $ref: `#/$defs/${body}` }
  }
  // Effect writes `unknown` with an $id of its own, which a validator would take for a second schema to load.
  defs.Reply!.properties.body = { description: "the reply, encoded with the request's reply type" }
  const document = {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: `Kindling wire protocol, version ${Envelope.protocolVersion}`,
    description: "A frame's payload is an Envelope (MessagePack; bin values are strings here, of " +
      "contentEncoding binary). `send` and `ask` bodies are Message values, `failure`, `reject` and " +
      "`fetchFailed` errors are Error values, and a `reply` body is the reply type of its request: a " +
      "ReplyMessage or one of the types docs/protocol.md lists.",
    $ref: "#/$defs/Envelope",
    $defs: defs
  }
  return `${JSON.stringify(document, null, 2)}\n`
}
