/**
 * The master as a running role: its core (`MasterCore`) in the kernel's shell on the RpcEnv in context, with
 * the master's own commands carried out here — records persisted and removed, uploaded artifacts stored — and
 * leadership fed in from the election.
 *
 * @since 0.1.0
 */
import { Shell } from "@kindling/kernel"
import { Endpoints, type Ids, type QueryMessages, type RpcAddress } from "@kindling/protocol"
import { RpcEnv } from "@kindling/rpc"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { ArtifactStore } from "./ArtifactStore.js"
import { LeaderElection } from "./LeaderElection.js"
import * as MasterCore from "./MasterCore.js"
import { Persistence, type PersistenceError } from "./Persistence.js"
import type * as StoreTrust from "./StoreTrust.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options extends Omit<MasterCore.Config, "self"> {
  /** Check the core's invariants after every step (`kindling.debug.validateState`). */
  readonly validateState?: boolean
  /** Called when the master must stop (leadership revoked, persistence failed); the process exits with the code. */
  readonly onExit: (code: number) => Effect.Effect<void>
}

/**
 * A running master.
 *
 * @since 0.1.0
 * @category models
 */
export interface Master {
  readonly address: RpcAddress.RpcAddress
  readonly url: string
  /** The master's whole state, as `RequestMasterState` answers it. */
  readonly state: Effect.Effect<QueryMessages.MasterStateResponse>
  /** Kills an app, as the kill button of the master's web UI does (ignored unless the master leads). */
  readonly killApplication: (appId: Ids.AppId) => Effect.Effect<void>
  /** Kills a driver, as the kill button of the master's web UI does (ignored unless the master leads). */
  readonly killDriver: (driverId: Ids.DriverId) => Effect.Effect<void>
  /** Decommissions the workers on these hosts, as the UI's `/workers/kill/` does (ignored unless the master leads). */
  readonly decommissionHosts: (hosts: ReadonlyArray<string>) => Effect.Effect<void>
}

/**
 * Starts a master on the RpcEnv in context; it stops when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<
  Master,
  Shell.NotListening | RpcEnv.EndpointAlreadyRegistered,
  RpcEnv.RpcEnv | Persistence | ArtifactStore | LeaderElection | Scope.Scope
> =>
  Effect.gen(function*() {
    const persistence = yield* Persistence
    const election = yield* LeaderElection
    const artifacts = yield* ArtifactStore
    const rpc = yield* RpcEnv.RpcEnv
    const { onExit, validateState, ...config } = options
    const address = yield* Shell.listeningAddress(Endpoints.master)
    // A master that cannot keep its recovery state must not go on leading with state a successor would not find.
    // With standbys it resigns: the step is abandoned (none of its asks hears of a success) and the master is
    // STANDBY before its next input, still answering queries and in the election. The only master stops instead,
    // and a restarted one recovers from what is on disk.
    const orStepDown = (write: Effect.Effect<void, PersistenceError>) =>
      Effect.catchAll(write, (error) => {
        const resign = election.resign
        if (resign === undefined) return Effect.die(error)
        return Effect.zipRight(
          resign(error.message),
          new Shell.Abandoned({ reason: `${error.message}; the master steps down` })
        )
      })
    const shell = yield* Shell.make({
      core: MasterCore.core,
      state: MasterCore.make({ ...config, self: Endpoints.ref(address, Endpoints.master) }),
      interpret: (command, host) => {
        switch (command._tag) {
          case "Persist":
            return orStepDown(persistence.persist(command.record)).pipe(
              Effect.zipRight(
                command.record.kind === "driver" ? artifacts.driverPersisted(command.record.value) : Effect.void
              )
            )
          case "Unpersist":
            return orStepDown(persistence.unpersist(command.kind, command.id)).pipe(
              Effect.zipRight(command.kind === "driver" ? artifacts.driverRemoved(command.id) : Effect.void)
            )
          case "ProbeWorker":
            return Effect.sync(() =>
              host.fork(
                rpc.refusesConnections(command.address).pipe(
                  Effect.map((gone) => gone && host.feed({ _tag: "WorkerProcessGone", workerId: command.workerId }))
                )
              )
            )
          case "StoreArtifact": {
            // Fetching takes a while: the master goes on meanwhile and answers the upload when it is stored.
            const { request } = command.ask
            const upload = {
              from: command.from,
              name: request.name,
              sha256: request.sha256,
              size: request.size,
              untilLeading: command.untilLeading
            }
            return Effect.sync(() =>
              host.fork(
                Effect.exit(artifacts.store(upload)).pipe(
                  Effect.map((exit) => host.feed({ _tag: "ArtifactStored", ask: command.ask, exit }))
                )
              )
            )
          }
        }
      },
      validateState: validateState ?? false,
      // Fencing: a leader whose lease lapsed steps down before it handles anything else.
      preempt: (state) =>
        MasterCore.leads(state) && !election.mayLead() ? { _tag: "RevokedLeadership" as const } : undefined,
      onExit: (code) => onExit(code)
    })

    // A store the cluster did not write (or cannot vouch for) stops the master, standbys or not: no other try would
    // find it any more trustworthy, and nothing of it may be recovered.
    const untrusted = (error: StoreTrust.UntrustedStore) =>
      Effect.logError(`${error.message}. The master stops`).pipe(Effect.zipRight(onExit(1)))

    // What is stored is read when leadership comes, not before: another master may have led in between.
    yield* election.join({
      elected: persistence.readAll.pipe(
        Effect.matchEffect({
          // What a successor would recover cannot be read: with standbys, another try (as a new candidate) may do
          // better; the only master stops.
          onFailure: (error) =>
            error._tag === "UntrustedStore"
              ? untrusted(error)
              : election.resign === undefined
              ? Effect.logError(`${error.message}; the master stops`).pipe(Effect.zipRight(onExit(1)))
              : Effect.logWarning(`${error.message}; the master steps down`).pipe(
                Effect.zipRight(election.resign(error.message))
              ),
          onSuccess: (stored) =>
            artifacts.recovered(stored.drivers).pipe(
              Effect.zipRight(Effect.sync(() => shell.feed({ _tag: "ElectedLeader", stored })))
            )
        })
      ),
      revoked: Effect.sync(() => shell.feed({ _tag: "RevokedLeadership" })),
      untrusted
    })
    yield* Effect.logInfo(`Kindling master at ${address.url}`)

    return {
      address,
      url: address.url,
      state: shell.read(MasterCore.masterState),
      killApplication: (appId) => Effect.sync(() => shell.feed({ _tag: "KillApplicationFromUi", appId })),
      killDriver: (driverId) => Effect.sync(() => shell.feed({ _tag: "KillDriverFromUi", driverId })),
      decommissionHosts: (hosts) => Effect.sync(() => shell.feed({ _tag: "DecommissionHostsFromUi", hosts }))
    }
  })
