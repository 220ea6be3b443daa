/**
 * Recovery mode ZOOKEEPER (`kindling.deploy.recoveryMode=ZOOKEEPER`): standby masters elect their leader through
 * ZooKeeper and the leader keeps its records there, as Spark does with Curator.
 *
 * - Election (Curator's LeaderLatch): each master creates an ephemeral sequential node under
 *   `<dir>/leader_election`; the one with the lowest sequence number leads, each other one watches the node just
 *   before its own and looks again when it goes.
 * - Persistence: one znode per app, driver and worker under `<dir>/master_status`, named as the files of recovery
 *   mode FILESYSTEM (`app_<id>`, …) and holding the same JSON.
 * - Fencing: leadership is a lease. Every third of the session timeout the master checks that its latch node is
 *   still there; a successful check sent at `t` proves its session alive until `t` plus the session timeout, and
 *   the lease runs to two thirds of that. When a check fails, goes unanswered past the lease, or the connection
 *   drops (Curator's SUSPENDED), the master steps down at once, and `mayLead` is false from the instant the lease
 *   ends even if the process was paused and has not run a line since. Every write is a transaction that also
 *   checks the latch node, so ZooKeeper itself refuses a write from a master whose session has expired. A master
 *   that stepped down closes its session and joins the election again as a new candidate, as a standby. The
 *   lease's decisions are `LeadershipLease`'s, a pure state machine under a model test; this layer carries out
 *   the requests and feeds it their answers and their times.
 * - Trust (`StoreTrust`): with the cluster's secret, the directory, `leader_election`, `master_status` and every
 *   record must carry the cluster's ACL, and every record its seal; otherwise the master stops, naming the node,
 *   and recovers nothing. A candidate in the election counts only if it is an ephemeral latch node (and, with the
 *   secret, the cluster's): anything else there is named in a warning and passed over, so a node nobody will ever
 *   remove cannot keep every master waiting behind it.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { decodeRecord, encodeRecord, kindOf, recordName, toStored } from "./internal/records.js"
import { type Candidate, LeaderElection } from "./LeaderElection.js"
import * as LeadershipLease from "./LeadershipLease.js"
import type { Record } from "./MasterCore.js"
import { Persistence, PersistenceError } from "./Persistence.js"
import * as StoreTrust from "./StoreTrust.js"
import * as ZooKeeper from "./ZooKeeper.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The ensemble, `host:port[,host:port…]` (`kindling.deploy.zookeeper.url`). */
  readonly url: string
  /** The master's znodes go under this path (`kindling.deploy.zookeeper.dir`, default `/kindling`). */
  readonly directory: string
  /** The session timeout to ask for; the server may grant another within its bounds. */
  readonly sessionTimeoutMillis: number
  /** Written into this master's latch node (its URL), so that a look at ZooKeeper shows who takes part. */
  readonly candidate: string
  /**
   * The cluster's secret (`kindling.authenticate.secret`): every znode under the directory is readable and
   * writable with the digest `kindling:<secret>` alone (ZooKeeper's digest ACL), and every record is sealed with it.
   * Without, the znodes are open to anyone who reaches the ensemble.
   */
  readonly secret?: string | undefined
}

/**
 * The election and the store of recovery mode ZOOKEEPER, on one session at a time.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<LeaderElection | Persistence> =>
  Layer.effectContext(Effect.gen(function*() {
    // The lease is timed on the node's Clock, which a test can drive; `mayLead` reads it synchronously.
    const clock = yield* Effect.clock
    const electionPath = `${options.directory}/leader_election`
    const statusPath = `${options.directory}/master_status`
    const digest = options.secret === undefined ? undefined : `kindling:${options.secret}`
    const seal = StoreTrust.makeSeal(options.secret)

    // Without the secret nothing is the cluster's alone, and there is no ACL to check.
    const trustNode = (session: ZooKeeper.Session, path: string) =>
      Effect.gen(function*() {
        if (digest === undefined) return
        const problem = StoreTrust.aclProblem((yield* session.inspect(path)).acl, StoreTrust.digestIdentity(digest))
        if (problem !== undefined) {
          return yield* new StoreTrust.UntrustedStore({ path, reason: problem, remedy: StoreTrust.zooKeeperRemedy })
        }
      })

    // Whether a node of the election is a candidate: an ephemeral latch node (of the cluster's, with the secret).
    // Why not, once per node (its name is never reused: ZooKeeper's sequence only grows).
    const passedOver = new Set<string>()
    const whyNotCandidate = (session: ZooKeeper.Session, name: string) =>
      Effect.gen(function*() {
        if (!latchName.test(name)) return "is not a latch node"
        const facts = yield* session.inspect(`${electionPath}/${name}`)
        if (!facts.ephemeral) return "is a persistent node (a candidate's node goes with its session)"
        return digest === undefined ? undefined : StoreTrust.aclProblem(facts.acl, StoreTrust.digestIdentity(digest))
      }).pipe(
        // A node gone since the listing is no candidate either; the next listing will not show it.
        Effect.catchIf((error) => error.code === ZooKeeper.codes.noNode, () => Effect.succeed("is gone")),
        Effect.tap((reason) =>
          reason === undefined || reason === "is gone" || passedOver.has(name)
            ? Effect.void
            : Effect.sync(() => passedOver.add(name)).pipe(
              Effect.zipRight(
                Effect.logWarning(`Ignoring ${electionPath}/${name} in the election: it ${reason}; remove it`)
              )
            )
        )
      )

    // The current round of the election: its session, this master's node in it, and the lease that decides
    // whether this master leads (`LeadershipLease`, which every answer of ZooKeeper goes through).
    let current: Round | undefined
    const mayLead = () =>
      current !== undefined && LeadershipLease.mayLead(current.lease, clock.unsafeCurrentTimeMillis())

    const feed = (round: Round, candidate: Candidate, input: LeadershipLease.Input) =>
      Effect.suspend(() => {
        const [lease, commands] = LeadershipLease.step(round.lease, input)
        round.lease = lease
        return Effect.forEach(commands, (command) => {
          switch (command._tag) {
            case "Elected":
              return Effect.zipRight(
                Effect.logInfo(`Elected leader through ZooKeeper (${round.latch})`),
                candidate.elected
              )
            case "Revoked":
              return Effect.zipRight(Effect.logWarning("Stepping down as leader"), candidate.revoked)
            case "EndRound":
              return Deferred.fail(round.ended, command.error)
          }
        }, { discard: true })
      })

    // A ZooKeeper request of the round that fails ends it, through the lease.
    const orEnd = (round: Round, candidate: Candidate) => (effect: Effect.Effect<void, ZooKeeper.ZooKeeperError>) =>
      Effect.catchAll(effect, (error) => feed(round, candidate, { _tag: "Failed", error }))

    // Checks the latch node every third of the session timeout; each answer (or its absence) goes to the lease.
    const check = (round: Round, candidate: Candidate) =>
      Effect.gen(function*() {
        const sentAt = clock.unsafeCurrentTimeMillis()
        const present = yield* round.session.exists(round.latch).pipe(
          Effect.timeoutOption(LeadershipLease.checkTimeoutMillis(round.lease, sentAt))
        )
        yield* feed(
          round,
          candidate,
          Option.isNone(present)
            ? { _tag: "CheckUnanswered" }
            : { _tag: "CheckAnswered", sentAt, present: present.value }
        )
      }).pipe(orEnd(round, candidate), Effect.repeat(Schedule.spaced(LeadershipLease.checkEveryMillis(round.lease))))

    // Waits to be first in line: each other candidate watches the candidate just before its own.
    const contend = (round: Round, candidate: Candidate) =>
      Effect.gen(function*() {
        const name = round.latch.slice(electionPath.length + 1)
        for (;;) {
          const nodes = yield* round.session.children(electionPath)
          if (!nodes.includes(name)) {
            return yield* new ZooKeeper.ZooKeeperError({
              operation: "find",
              path: round.latch,
              reason: "the node is gone"
            })
          }
          const ahead = nodes.filter((node) => latchName.test(node) && sequenceOf(node) < sequenceOf(name))
            .sort((a, b) => sequenceOf(b) - sequenceOf(a))
          let previous: string | undefined
          for (const node of ahead) {
            if ((yield* whyNotCandidate(round.session, node)) === undefined) {
              previous = node
              break
            }
          }
          // Nodes that are not latches are named once too, though they could not be ahead of anyone.
          for (const node of nodes) if (!latchName.test(node)) yield* whyNotCandidate(round.session, node)
          if (previous === undefined) break
          const deleted = yield* round.session.watchDeletion(`${electionPath}/${previous}`)
          yield* deleted
        }
        yield* feed(round, candidate, { _tag: "FirstInLine" })
      }).pipe(orEnd(round, candidate))

    // One round: a session, a node in the election, and leadership for as long as the lease holds.
    const round = (candidate: Candidate) =>
      Effect.gen(function*() {
        const session = yield* ZooKeeper.connect({
          url: options.url,
          sessionTimeoutMillis: options.sessionTimeoutMillis,
          connectTimeoutMillis: options.sessionTimeoutMillis,
          ...(digest === undefined ? {} : { digest })
        })
        // Nodes someone else made first are refused, not taken over: whoever made them could have put anything there.
        // Each is checked before anything is made inside it.
        for (const path of [options.directory, electionPath, statusPath]) {
          yield* session.ensurePath(path)
          yield* trustNode(session, path)
        }
        const sentAt = clock.unsafeCurrentTimeMillis()
        const latch = yield* session.createEphemeralSequential(
          `${electionPath}/latch-`,
          new TextEncoder().encode(options.candidate)
        )
        const round: Round = {
          session,
          latch,
          candidate,
          lease: LeadershipLease.start({ latch, timeoutMillis: session.timeoutMillis, sentAt }),
          ended: yield* Deferred.make<never, ZooKeeper.ZooKeeperError>()
        }
        current = round
        yield* Effect.logInfo(
          `Joined the election at ${options.url} as ${latch} (session 0x${session.id}, timeout ${session.timeoutMillis} ms)`
        )
        const lost = Effect.flatMap(session.lost, () =>
          feed(round, candidate, {
            _tag: "Failed",
            error: new ZooKeeper.ZooKeeperError({ operation: "keep", path: "the session", reason: "disconnected" })
          }))
        yield* Effect.forkScoped(contend(round, candidate))
        yield* Effect.forkScoped(check(round, candidate))
        yield* Effect.forkScoped(lost)
        // The lease ends the round, with the reason it ended for.
        return yield* Deferred.await(round.ended)
      }).pipe(Effect.scoped, Effect.ensuring(leave(candidate)))

    // A round left for any reason (its end, or the election's scope closing) steps down if it led.
    const leave = (candidate: Candidate) =>
      Effect.suspend(() => {
        const round = current
        current = undefined
        if (round === undefined) return Effect.void
        const error = new ZooKeeper.ZooKeeperError({ operation: "leave", path: round.latch, reason: "the round ended" })
        return feed(round, candidate, { _tag: "Failed", error })
      })

    const join = (candidate: Candidate): Effect.Effect<void, never, Scope.Scope> =>
      round(candidate).pipe(
        Effect.catchTag("ZooKeeperError", (error) => Effect.logWarning(`${error.message}; joining the election again`)),
        // A short pause between rounds: a lost ensemble is retried about once a second, not in a busy loop.
        Effect.zipRight(Effect.sleep("500 millis")),
        Effect.forever,
        // No later round would find the store any more trustworthy.
        Effect.catchTag("UntrustedStore", candidate.untrusted),
        Effect.forkScoped,
        Effect.asVoid
      )

    // Ends the round as a failed request would: the master steps down and joins again as a new candidate.
    const resign = (reason: string) =>
      Effect.suspend(() => {
        const round = current
        if (round === undefined) return Effect.void
        const error = new ZooKeeper.ZooKeeperError({ operation: "resign", path: round.latch, reason })
        return feed(round, round.candidate, { _tag: "Failed", error })
      })

    // A write must be answered while the lease holds: past it, another master may lead already, and this one must
    // not keep its queue waiting on a session ZooKeeper may have expired (it would answer no one, not even a query).
    const withinLease = (round: Round, operation: string, path: string) =>
    <A>(
      write: Effect.Effect<A, PersistenceError>
    ): Effect.Effect<A, PersistenceError> =>
      Effect.suspend(() =>
        Effect.timeoutFail(write, {
          duration: LeadershipLease.checkTimeoutMillis(round.lease, clock.unsafeCurrentTimeMillis()),
          onTimeout: () =>
            new PersistenceError({ operation, path, reason: "the leadership lease lapsed before ZooKeeper answered" })
        })
      )

    // Every write goes with a check of this master's latch node, in one transaction.
    const leader = (operation: string, path: string) =>
      current === undefined
        ? Effect.fail(
          new PersistenceError({ operation, path, reason: "this master holds no ZooKeeper session (not leading)" })
        )
        : Effect.succeed(current)
    const failed = (operation: string, path: string) => (error: ZooKeeper.ZooKeeperError) =>
      new PersistenceError({ operation, path, reason: error.reason })

    const persist = (record: Record) =>
      Effect.gen(function*() {
        const path = `${statusPath}/${recordName(record.kind, record.value.id)}`
        const round = yield* leader("write", path)
        const text = yield* encodeRecord(record, seal).pipe(
          Effect.mapError((reason) => new PersistenceError({ operation: "encode", path, reason }))
        )
        const data = new TextEncoder().encode(text)
        const check = { _tag: "Check", path: round.latch } as const
        yield* round.session.commit([check, { _tag: "Create", path, data }]).pipe(
          Effect.catchIf(
            (error) => error.code === ZooKeeper.codes.nodeExists,
            () => round.session.commit([check, { _tag: "SetData", path, data }])
          ),
          Effect.mapError(failed("write", path)),
          withinLease(round, "write", path)
        )
      })

    const unpersist = (kind: Record["kind"], id: string) =>
      Effect.gen(function*() {
        const path = `${statusPath}/${recordName(kind, id)}`
        const round = yield* leader("remove", path)
        const check = { _tag: "Check", path: round.latch } as const
        yield* round.session.commit([check, { _tag: "Remove", path }]).pipe(
          // Either the record was gone already (fine) or the latch node is (not fine): the check alone says which.
          Effect.catchIf((error) => error.code === ZooKeeper.codes.noNode, () => round.session.commit([check])),
          Effect.mapError(failed("remove", path)),
          withinLease(round, "remove", path)
        )
      })

    const readAll = Effect.gen(function*() {
      const { session } = yield* leader("read", statusPath)
      const names = yield* Effect.mapError(session.children(statusPath), failed("list", statusPath))
      const records: Array<Record> = []
      for (const name of [...names].sort()) {
        const kind = kindOf(name)
        if (kind === undefined) continue
        const path = `${statusPath}/${name}`
        yield* trustNode(session, path).pipe(
          Effect.catchTag("ZooKeeperError", (error) => Effect.fail(failed("inspect", path)(error)))
        )
        const data = yield* Effect.mapError(session.getData(path), failed("read", path))
        records.push(
          yield* decodeRecord(
            { kind, name, path, text: new TextDecoder().decode(data) },
            seal,
            (reason) => new PersistenceError({ operation: "decode", path, reason })
          )
        )
      }
      return toStored(records)
    })

    return Context.make(LeaderElection, { join, mayLead, resign }).pipe(
      Context.add(Persistence, { readAll, persist, unpersist })
    )
  }))

// One round of the election: its session, this master's node, the lease, and the end the lease decides.
interface Round {
  readonly session: ZooKeeper.Session
  readonly latch: string
  readonly candidate: Candidate
  lease: LeadershipLease.State
  readonly ended: Deferred.Deferred<never, ZooKeeper.ZooKeeperError>
}

// A latch node's name: the prefix masters create it with, and the ten digits of ZooKeeper's sequence.
const latchName = /^latch-\d{10}$/

// The sequence number ZooKeeper appended to a latch node's name.
const sequenceOf = (name: string): number => Number(name.slice(-10))
