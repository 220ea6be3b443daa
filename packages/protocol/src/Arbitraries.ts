/**
 * fast-check arbitraries for every message, reply, error and enum of the protocol (fast-check 3, as bundled
 * with effect), for property tests of Kindling and of third-party nodes.
 *
 * @since 0.1.0
 */
import * as Arbitrary from "effect/Arbitrary"
import type * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import * as Catalogue from "./Catalogue.js"
import * as Errors from "./Errors.js"
import * as States from "./States.js"

/**
 * @since 0.1.0
 * @category constructors
 */
export const of: <A, I>(schema: Schema.Schema<A, I, never>) => FastCheck.Arbitrary<A> = Arbitrary.make

/**
 * Any message of a conversation, by its title.
 *
 * @since 0.1.0
 * @category arbitraries
 */
export const conversations: ReadonlyArray<
  { readonly title: string; readonly arbitrary: FastCheck.Arbitrary<unknown> }
> = Catalogue.conversations.map((conversation) => ({
  title: conversation.title,
  arbitrary: Arbitrary.make(conversation.union)
}))

/**
 * Any message of any conversation.
 *
 * @since 0.1.0
 * @category arbitraries
 */
export const message: FastCheck.Arbitrary<unknown> = Arbitrary.make(
  Schema.Union(...Catalogue.conversations.map((conversation) => conversation.union))
)

/**
 * Any reply message.
 *
 * @since 0.1.0
 * @category arbitraries
 */
export const reply: FastCheck.Arbitrary<unknown> = Arbitrary.make(Schema.Union(...Catalogue.replies))

/**
 * Any protocol error.
 *
 * @since 0.1.0
 * @category arbitraries
 */
export const error: FastCheck.Arbitrary<unknown> = Arbitrary.make(Schema.Union(...Object.values(Errors.all)))

/**
 * Each state enum's arbitrary, by enum name.
 *
 * @since 0.1.0
 * @category arbitraries
 */
export const states = {
  RecoveryState: Arbitrary.make(States.RecoveryState),
  WorkerState: Arbitrary.make(States.WorkerState),
  DriverState: Arbitrary.make(States.DriverState),
  ApplicationState: Arbitrary.make(States.ApplicationState),
  ExecutorState: Arbitrary.make(States.ExecutorState),
  TaskState: Arbitrary.make(States.TaskState)
} as const
