/**
 * The inputs the kernel feeds every core, whatever the role, as schemas: they document what a core is told (the
 * protocol reference is generated from them) and `Core.KernelInput` is derived from them. They never cross a
 * connection: a received message does, but as itself, not wrapped in `Receive`.
 *
 * @since 0.1.0
 */
import { type Codec, RpcAddress } from "@kindling/protocol"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/**
 * A decoded message of the role's endpoint. Which messages those are is the role's (its endpoint's union, in
 * the protocol catalogue), so the kernel knows it only as a message; `Core.KernelInput` narrows it per role.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Message: Schema.Schema<Codec.Message> = Schema.declare(
  (input: unknown): input is Codec.Message => Predicate.hasProperty(input, "_tag") && typeof input._tag === "string",
  { identifier: "Message", description: "the decoded message, one of those the role's endpoint receives" }
)

/**
 * A request being answered: the id the shell routes the reply by, and the request.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Ask = <M extends Codec.Message, I>(request: Schema.Schema<M, I, never>) =>
  Schema.Struct({ id: Schema.Int, request })

/**
 * @since 0.1.0
 * @category schemas
 */
export const Start = Schema.TaggedStruct("Start", {}).annotations({
  description: "Once, first of all, when the role's endpoint is registered: the role starts its timers and work"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const Receive = Schema.TaggedStruct("Receive", {
  message: Message,
  ask: Schema.propertySignature(Schema.UndefinedOr(Ask(Message))).annotations({
    description: "present when the message is a request, whether it came as an ask or as a one-way send"
  }),
  sender: Schema.propertySignature(Schema.UndefinedOr(RpcAddress.RpcAddress)).annotations({
    description: "the listening address of the sending node, when it has one"
  }),
  peer: Schema.propertySignature(RpcAddress.RpcAddress).annotations({
    description: "the node at the other end of the connection the message came on"
  }),
  connection: Schema.propertySignature(Schema.Int).annotations({
    description: "the connection it came on (0 for a message the node sent itself)"
  })
}).annotations({ description: "A message arrived at the role's endpoint" })

const connection = {
  peer: RpcAddress.RpcAddress,
  connection: Schema.Int
}

/**
 * @since 0.1.0
 * @category schemas
 */
export const Connected = Schema.TaggedStruct("Connected", connection).annotations({
  description: "A peer's connection passed its handshake"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const Disconnected = Schema.TaggedStruct("Disconnected", connection).annotations({
  description: "A peer's connection closed"
})

/**
 * Every kernel input, in the order a core may first see them.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Input = Schema.Union(Start, Receive, Connected, Disconnected)
