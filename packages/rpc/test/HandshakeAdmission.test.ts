// Which connection in its handshake makes room for a new one (`handshakeToEvict`): a model of a node under a flood
// of silent connections from one address and from many, with cluster members connecting among them.
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { handshakeGraceMillis, handshakeToEvict, type Peer } from "../src/internal/rpcPeer.js"

interface Model {
  readonly peer: Peer
  /** A member says hello `helloAfter` ms after it connects and proves itself `proofAfter` ms later. */
  readonly member: boolean
  readonly connectedAt: number
  readonly helloAfter: number
  readonly proofAfter: number
}

const makePeer = (id: number, host: string, now: number): Peer =>
  ({
    id,
    direction: "in",
    connection: { remote: { host, port: 40_000 + id } },
    lastReceived: now,
    heard: false
  }) as unknown as Peer

const limits = { total: 8, perAddress: 4 }

// One arrival per step: an attacker from one of a few addresses, or now and then a member from any of them.
const arrival = fc.record({
  memberChance: fc.integer({ min: 0, max: 9 }),
  host: fc.constantFrom("10.0.0.1", "10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"),
  // Members answer within the grace, however loaded the node (that is what the grace is for).
  helloAfter: fc.integer({ min: 0, max: handshakeGraceMillis - 1 }),
  proofAfter: fc.integer({ min: 0, max: handshakeGraceMillis - 1 }),
  gap: fc.integer({ min: 0, max: 200 })
})

describe("handshakeToEvict", () => {
  it("never closes a member that answers within its grace, whatever the flood, and always admits the newcomer", () =>
    fc.assert(
      fc.property(fc.array(arrival, { minLength: 1, maxLength: 300 }), (arrivals) => {
        const handshaking = new Map<Peer, Model>()
        let now = 0
        let id = 0
        // Members hear and prove themselves as time passes; a proved one leaves the handshake.
        const advance = (to: number) => {
          now = to
          for (const [peer, model] of handshaking) {
            if (!model.member) continue
            if (!peer.heard && now >= model.connectedAt + model.helloAfter) {
              peer.heard = true
              peer.lastReceived = model.connectedAt + model.helloAfter
            }
            if (now >= model.connectedAt + model.helloAfter + model.proofAfter) handshaking.delete(peer)
          }
        }
        for (const a of arrivals) {
          advance(now + a.gap)
          const member = a.memberChance === 0
          const victim = handshakeToEvict(handshaking.keys(), a.host, limits, now)
          if (victim !== undefined) {
            const model = handshaking.get(victim)
            assert.isDefined(model, "the victim is in its handshake")
            assert.isFalse(model!.member, `member ${victim.id} closed at ${now}`)
            assert.isAtLeast(now - victim.lastReceived, handshakeGraceMillis)
            // A connection that said something goes only when no silent one past its grace is left.
            if (victim.heard) {
              for (const [peer] of handshaking) {
                assert.isFalse(!peer.heard && now - peer.lastReceived >= handshakeGraceMillis)
              }
            }
            handshaking.delete(victim)
          }
          const peer = makePeer(++id, a.host, now)
          handshaking.set(peer, {
            peer,
            member,
            connectedAt: now,
            helloAfter: a.helloAfter,
            proofAfter: a.proofAfter
          })
        }
      }),
      { numRuns: 300 }
    ))

  it("keeps the silent connections of one address to its share, and leaves other addresses' alone", () => {
    const handshaking: Array<Peer> = []
    let now = 0
    // Six silent connections from each of two addresses, a second apart so each is past its grace.
    for (let i = 0; i < 12; i++) {
      now += 1000
      const host = i % 2 === 0 ? "10.0.0.1" : "10.0.0.2"
      const victim = handshakeToEvict(handshaking, host, { total: 64, perAddress: 4 }, now)
      if (victim !== undefined) handshaking.splice(handshaking.indexOf(victim), 1)
      handshaking.push(makePeer(i, host, now))
    }
    // Each address kept its newest four: the oldest two of each made room.
    const ids = (host: string) => handshaking.filter((p) => p.connection.remote.host === host).map((p) => p.id)
    assert.deepStrictEqual(ids("10.0.0.1"), [4, 6, 8, 10])
    assert.deepStrictEqual(ids("10.0.0.2"), [5, 7, 9, 11])
  })

  it("at the total cap, the address holding the most silent connections pays", () => {
    const handshaking = [
      ...[1, 2, 3].map((id) => makePeer(id, "10.0.0.1", 0)),
      makePeer(4, "10.0.0.2", 0)
    ]
    const victim = handshakeToEvict(handshaking, "10.0.0.3", { total: 4, perAddress: 8 }, 1000)
    assert.strictEqual(victim?.id, 1)
    // Under the cap, nothing goes.
    assert.isUndefined(handshakeToEvict(handshaking, "10.0.0.3", { total: 5, perAddress: 8 }, 1000))
    // Within their grace, nothing goes either: the cap is exceeded for a moment.
    assert.isUndefined(handshakeToEvict(handshaking, "10.0.0.3", { total: 4, perAddress: 8 }, 100))
  })
})
