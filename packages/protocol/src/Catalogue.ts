/**
 * The protocol's table of contents: every conversation, who speaks in it, and its messages. The docs generator,
 * the JSON Schema and the test kit are all built from it, so a message missing here is missing everywhere.
 *
 * @since 0.1.0
 */
import type * as Schema from "effect/Schema"
import * as AppClientMessages from "./AppClientMessages.js"
import * as ClusterMessages from "./ClusterMessages.js"
import * as EndpointNames from "./EndpointNames.js"
import * as QueryMessages from "./QueryMessages.js"
import * as SubmissionMessages from "./SubmissionMessages.js"
import * as WorkerMessages from "./WorkerMessages.js"

/**
 * A union of message classes as the message modules export it (a single class stands for itself).
 *
 * @since 0.1.0
 * @category models
 */
export type MessageUnion = Schema.Schema<any, any, never>

/**
 * The message classes of a union, in declaration order.
 *
 * @since 0.1.0
 * @category accessors
 */
export const members = (union: MessageUnion): ReadonlyArray<Schema.Schema<any, any, never>> =>
  "members" in union
    ? (union as unknown as { readonly members: ReadonlyArray<Schema.Schema<any, any, never>> }).members
    : [union]

/**
 * @since 0.1.0
 * @category models
 */
export interface Conversation {
  readonly title: string
  readonly from: string
  readonly to: string
  /** The endpoint that receives these messages. */
  readonly endpoint: string
  readonly description: string
  readonly union: MessageUnion
}

/**
 * @since 0.1.0
 * @category models
 */
export const conversations: ReadonlyArray<Conversation> = [
  {
    title: "Worker → Master",
    from: "Worker",
    to: "Master",
    endpoint: EndpointNames.master,
    description: "Registration, heartbeats and state reports.",
    union: WorkerMessages.WorkerToMaster
  },
  {
    title: "Master → Worker",
    from: "Master",
    to: "Worker",
    endpoint: EndpointNames.worker,
    description: "Registration answers and commands to launch and kill drivers and executors.",
    union: WorkerMessages.MasterToWorker
  },
  {
    title: "Submission client → Master",
    from: "Submission client",
    to: "Master",
    endpoint: EndpointNames.master,
    description: "What `kindling submit`, `kill` and `status` and SDK tools ask. A master that is not ALIVE " +
      "fails each ask with `MasterNotAlive`.",
    union: SubmissionMessages.SubmissionRequest
  },
  {
    title: "App client → Master",
    from: "App client",
    to: "Master",
    endpoint: EndpointNames.master,
    description: "An application's driver registers, acknowledges a new master and adjusts its executors.",
    union: AppClientMessages.AppClientToMaster
  },
  {
    title: "Master → App client",
    from: "Master",
    to: "App client",
    endpoint: EndpointNames.appClient,
    description: "Registration, executor grants and updates, and removal notices.",
    union: AppClientMessages.MasterToAppClient
  },
  {
    title: "Executor → Driver",
    from: "Executor",
    to: "Driver",
    endpoint: EndpointNames.scheduler,
    description: "Executor registration, task status and heartbeats (heartbeats go to `HeartbeatReceiver`).",
    union: ClusterMessages.ExecutorToDriver
  },
  {
    title: "Driver → Executor",
    from: "Driver",
    to: "Executor",
    endpoint: EndpointNames.executor,
    description: "Task launch and kill, stop and decommission.",
    union: ClusterMessages.DriverToExecutor
  },
  {
    title: "UI or tool → Master",
    from: "UI or tool",
    to: "Master",
    endpoint: EndpointNames.master,
    description: "Read-only and operator queries.",
    union: QueryMessages.MasterQuery
  },
  {
    title: "UI or tool → Worker",
    from: "UI or tool",
    to: "Worker",
    endpoint: EndpointNames.worker,
    description: "Read-only queries.",
    union: QueryMessages.WorkerQuery
  }
]

/**
 * The reply types of asks that are messages of their own (asks answered with a plain value such as a
 * Boolean list that value instead).
 *
 * @since 0.1.0
 * @category models
 */
export const replies: ReadonlyArray<MessageUnion> = [
  SubmissionMessages.SubmissionReply,
  QueryMessages.QueryReply,
  ClusterMessages.DriverReply
]
