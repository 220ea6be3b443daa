/**
 * The leadership lease against a model of a ZooKeeper session: the server hears each request somewhere between
 * its sending and its answer, and expires the session the timeout after it last heard from it — when another
 * master may be elected. Random checks, answers, delays, lost answers, failures and pauses; after every step the
 * lease's invariants hold, and the master never believes it leads once the server could have expired its session.
 */
import { assert, describe, it } from "@effect/vitest"
import { LeadershipLease, ZooKeeper } from "@kindling/master"
import { FastCheck as fc } from "effect"

const timeoutMillis = 3000
const latch = "/kindling/leader_election/latch-0000000001"

interface Check {
  readonly sentAt: number
  /** When the server handled it, and when its answer arrives (undefined: it never does). */
  readonly heardAt: number
  readonly answerAt: number | undefined
  readonly present: boolean
}

// The shell around the lease: feeds it, keeps its commands, and a view of the session as the server has it.
class World {
  now = 0
  lease = LeadershipLease.start({ latch, timeoutMillis, sentAt: 0 })
  // The server heard the latch's creation no earlier than it was sent.
  lastHeard = 0
  commands: Array<LeadershipLease.Command["_tag"]> = []
  pending: Array<{ readonly check: Check; readonly deadline: number }> = []

  feed(input: LeadershipLease.Input) {
    const [lease, commands] = LeadershipLease.step(this.lease, input)
    this.lease = lease
    this.commands.push(...commands.map((c) => c._tag))
    this.checkInvariants()
  }

  send(check: Omit<Check, "sentAt">) {
    this.pending.push({
      check: { ...check, sentAt: this.now },
      deadline: this.now + LeadershipLease.checkTimeoutMillis(this.lease, this.now)
    })
  }

  // Time passes (a pause of the process, too); answers and the shell's timeouts come in order of their times.
  advance(millis: number) {
    const until = this.now + millis
    for (;;) {
      const due = this.pending
        .map((p) => ({
          p,
          at: p.check.answerAt !== undefined && p.check.answerAt <= p.deadline ? p.check.answerAt : p.deadline
        }))
        .filter(({ at }) => at <= until)
        .sort((a, b) => a.at - b.at)[0]
      if (due === undefined) break
      this.pending = this.pending.filter((p) => p !== due.p)
      this.now = due.at
      const { check } = due.p
      this.checkInvariants()
      if (check.answerAt !== undefined && check.answerAt <= due.p.deadline) {
        this.lastHeard = Math.max(this.lastHeard, check.heardAt)
        this.feed({ _tag: "CheckAnswered", sentAt: check.sentAt, present: check.present })
      } else {
        // The server may have heard a check whose answer is late or lost, but the model leaves it out: the lease
        // must be safe on what was answered alone.
        this.feed({ _tag: "CheckUnanswered" })
      }
    }
    this.now = until
    this.checkInvariants()
  }

  checkInvariants() {
    assert.deepStrictEqual(LeadershipLease.validate(this.lease), [])
    // Safety: while the master believes it leads, the server cannot have expired its session.
    if (LeadershipLease.mayLead(this.lease, this.now)) {
      assert.isBelow(this.now, this.lastHeard + timeoutMillis, "leads past the session's possible expiry")
    }
    // Elected at most once, revoked only after it and at most once, the round ended at most once and last.
    const count = (tag: string) => this.commands.filter((c) => c === tag).length
    assert.isAtMost(count("Elected"), 1)
    assert.isAtMost(count("Revoked"), count("Elected"))
    assert.isAtMost(count("EndRound"), 1)
    if (count("EndRound") === 1) assert.strictEqual(this.commands.at(-1), "EndRound")
    assert.strictEqual(this.lease.ended !== undefined, count("EndRound") === 1)
    if (this.lease.ended !== undefined) assert.isFalse(LeadershipLease.mayLead(this.lease, this.now))
  }
}

type Op = (world: World) => void

const operation: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.constant<Op>((world) => world.feed({ _tag: "FirstInLine" })), weight: 2 },
  {
    // A check: heard by the server after some delay, answered after some more, or its answer lost; the node is
    // mostly there.
    arbitrary: fc.record({
      toServer: fc.integer({ min: 0, max: timeoutMillis }),
      back: fc.option(fc.integer({ min: 0, max: timeoutMillis }), { nil: undefined }),
      present: fc.integer({ min: 0, max: 9 }).map((n) => n > 0)
    }).map(({ back, present, toServer }): Op => (world) =>
      world.send({
        heardAt: world.now + toServer,
        answerAt: back === undefined ? undefined : world.now + toServer + back,
        present
      })
    ),
    weight: 6
  },
  {
    arbitrary: fc.integer({ min: 0, max: 2 * timeoutMillis }).map((ms): Op => (world) => world.advance(ms)),
    weight: 6
  },
  {
    arbitrary: fc.constant<Op>((world) =>
      world.feed({
        _tag: "Failed",
        error: new ZooKeeper.ZooKeeperError({ operation: "keep", path: "the session", reason: "disconnected" })
      })
    ),
    weight: 1
  }
)

describe("LeadershipLease", () => {
  it("model: random checks, answers, losses, failures and pauses keep every invariant after every step", () => {
    fc.assert(
      fc.property(fc.array(operation, { minLength: 1, maxLength: 80, size: "max" }), (ops) => {
        const world = new World()
        world.checkInvariants()
        for (const op of ops) op(world)
      }),
      { numRuns: 500 }
    )
  })

  it("a leader whose checks are answered within a third of the timeout leads for as long as they are", () => {
    const world = new World()
    world.feed({ _tag: "FirstInLine" })
    const every = LeadershipLease.checkEveryMillis(world.lease)
    for (let i = 0; i < 100; i++) {
      world.send({ heardAt: world.now + 50, answerAt: world.now + 100, present: true })
      world.advance(every)
      assert.isTrue(LeadershipLease.mayLead(world.lease, world.now), `period ${i}`)
    }
    assert.deepStrictEqual(world.commands, ["Elected"])
  })

  it("a leader paused past its lease does not lead when it wakes, before it hears anything", () => {
    const world = new World()
    world.feed({ _tag: "FirstInLine" })
    world.now = timeoutMillis * LeadershipLease.leaseShare
    assert.isFalse(LeadershipLease.mayLead(world.lease, world.now))
    assert.isTrue(LeadershipLease.mayLead(world.lease, world.now - 1))
  })

  it("a check that finds the node gone, or goes unanswered, steps the leader down and ends the round", () => {
    for (
      const input of [
        { _tag: "CheckAnswered", sentAt: 10, present: false },
        { _tag: "CheckUnanswered" }
      ] as const
    ) {
      const world = new World()
      world.feed({ _tag: "FirstInLine" })
      world.feed(input)
      assert.deepStrictEqual(world.commands, ["Elected", "Revoked", "EndRound"])
      // Late answers belong to the ended round and change nothing.
      world.feed({ _tag: "CheckAnswered", sentAt: 20, present: true })
      world.feed({ _tag: "FirstInLine" })
      assert.deepStrictEqual(world.commands, ["Elected", "Revoked", "EndRound"])
    }
  })

  it("an answer to an older check never shortens the lease", () => {
    const world = new World()
    world.feed({ _tag: "CheckAnswered", sentAt: 1000, present: true })
    world.feed({ _tag: "CheckAnswered", sentAt: 500, present: true })
    assert.strictEqual(LeadershipLease.leaseEnd(world.lease), 1000 + timeoutMillis * LeadershipLease.leaseShare)
  })
})
