/**
 * The endpoints of the protocol: each one's name and the union of messages it accepts. A ref made from a kind
 * (`ref(address, master)`) only takes those messages, so sending a worker's message to a master does not
 * compile; the roles register their endpoints with the same unions, so what a sender may send and what a
 * receiver decodes are one definition.
 *
 * An executor's bundle imports this module by its own path (`@kindling/protocol/Endpoints`), not through the
 * package's index (a namespace re-exported there is kept whole in a bundle): the kinds it does not use are marked
 * pure, so the bundle leaves them out, and with them the messages of the master, the workers and the clients, some
 * 30 ms of building schema classes that every executor process would spend before it registers.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as AppClientMessages from "./AppClientMessages.js"
import * as ClusterMessages from "./ClusterMessages.js"
import type * as Codec from "./Codec.js"
import * as EndpointNames from "./EndpointNames.js"
import * as QueryMessages from "./QueryMessages.js"
import { type Ref, type RpcAddress, RpcEndpointRef } from "./RpcAddress.js"
import * as SubmissionMessages from "./SubmissionMessages.js"
import * as WorkerMessages from "./WorkerMessages.js"

/**
 * An endpoint: the name it is registered under and the messages it accepts.
 *
 * @since 0.1.0
 * @category models
 */
export interface Kind<M extends Codec.Message> {
  readonly name: string
  readonly inbound: Schema.Schema<M, any, never>
}

/**
 * A kind of one's own (a test endpoint, a tool's).
 *
 * @since 0.1.0
 * @category constructors
 */
export const kind = <M extends Codec.Message>(name: string, inbound: Schema.Schema<M, any, never>): Kind<M> => ({
  name,
  inbound
})

/**
 * The master's endpoint: workers, submission clients, app clients and tools talk to it.
 *
 * @since 0.1.0
 * @category endpoints
 */
export const master = /* @__PURE__ */ kind(
  EndpointNames.master,
  /* @__PURE__ */ Schema.Union(
    WorkerMessages.WorkerToMaster,
    SubmissionMessages.SubmissionRequest,
    AppClientMessages.AppClientToMaster,
    QueryMessages.MasterQuery
  )
)

/**
 * A worker's endpoint: its master's commands and tools' queries.
 *
 * @since 0.1.0
 * @category endpoints
 */
export const worker = /* @__PURE__ */ kind(
  EndpointNames.worker,
  /* @__PURE__ */ Schema.Union(WorkerMessages.MasterToWorker, QueryMessages.WorkerQuery)
)

/**
 * The driver-side endpoint that talks to masters for an application.
 *
 * @since 0.1.0
 * @category endpoints
 */
export const appClient = /* @__PURE__ */ kind(EndpointNames.appClient, AppClientMessages.MasterToAppClient)

/**
 * The driver's scheduler backend, which executors register with and report to.
 *
 * @since 0.1.0
 * @category endpoints
 */
export const scheduler = kind(EndpointNames.scheduler, ClusterMessages.ExecutorToDriver)

/**
 * An executor's endpoint: its driver's commands.
 *
 * @since 0.1.0
 * @category endpoints
 */
export const executor = kind(EndpointNames.executor, ClusterMessages.DriverToExecutor)

/**
 * The messages each endpoint accepts, by endpoint. Message schemas name their ref fields through this interface
 * (an interface defers the lookup, so a message may refer to an endpoint whose union contains it).
 *
 * @since 0.1.0
 * @category models
 */
export interface Inbound {
  readonly Master: typeof master.inbound.Type
  readonly Worker: typeof worker.inbound.Type
  readonly AppClient: typeof appClient.inbound.Type
  readonly Scheduler: typeof scheduler.inbound.Type
  readonly Executor: typeof executor.inbound.Type
}

/**
 * The tags of the messages an endpoint accepts.
 *
 * @since 0.1.0
 * @category accessors
 */
export const tags = <M extends Codec.Message>(endpoint: Kind<M>): ReadonlyArray<string> => {
  // A union schema lists its members; a message class carries its tag.
  const of = (schema: unknown): ReadonlyArray<string> =>
    typeof schema === "function" && "members" in schema
      ? (schema.members as ReadonlyArray<unknown>).flatMap(of)
      : [(schema as { readonly _tag: string })._tag]
  return of(endpoint.inbound)
}

/**
 * A ref to the endpoint of that kind at `address`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ref = <M extends Codec.Message>(address: RpcAddress, endpoint: Kind<M>): Ref<M> =>
  new RpcEndpointRef({ address, name: endpoint.name }) as Ref<M>
