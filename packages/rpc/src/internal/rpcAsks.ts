/**
 * The asks a node is waiting on, by id: each resumed exactly once — by its reply, by its deadline (checked by the
 * node's sweeper, not a timer per ask), by its connection's end, or by the node stopping — and forgotten when
 * its asker gives up first.
 */
import { type Codec, Errors } from "@kindling/protocol"
import * as Effect from "effect/Effect"
import { replyEffect, type ReplyEnvelope } from "./rpcReplies.js"

export interface PendingAsk {
  /** The ids of the asks waiting on the ask's connection; none for an ask of an endpoint of this node. */
  readonly waitingOn: Set<number> | undefined
  readonly request: Codec.Message
  readonly endpoint: string
  readonly deadline: number
  readonly timeoutMillis: number
  readonly resume: (effect: Effect.Effect<unknown, unknown>) => void
}

export class AskTable {
  private readonly pending = new Map<number, PendingAsk>()
  private nextId = 0

  get size(): number {
    return this.pending.size
  }

  /** Registers an ask; its id goes in its request's envelope. */
  add(ask: PendingAsk): number {
    const id = this.nextId++
    this.pending.set(id, ask)
    return id
  }

  /** The asker gave up (or the ask could not be sent): a reply that comes later is dropped. */
  forget(id: number): void {
    const ask = this.pending.get(id)
    this.pending.delete(id)
    ask?.waitingOn?.delete(id)
  }

  /** Resumes the ask a reply answers, with the reply's typed outcome (held by the envelope when `handed`). */
  answer(envelope: ReplyEnvelope, handed = false): void {
    const ask = this.pending.get(envelope.id)
    if (ask === undefined) return // the asker gave up (timeout or interruption) before the reply came
    this.pending.delete(envelope.id)
    ask.waitingOn?.delete(envelope.id)
    ask.resume(replyEffect(ask.request, envelope, handed))
  }

  /** Fails every ask whose deadline is past with `AskTimeout`. */
  expire(now: number): void {
    for (const [id, ask] of this.pending) {
      if (ask.deadline > now) continue
      this.pending.delete(id)
      ask.waitingOn?.delete(id)
      ask.resume(Effect.fail(
        new Errors.AskTimeout({ endpoint: ask.endpoint, request: ask.request._tag, timeoutMillis: ask.timeoutMillis })
      ))
    }
  }

  /** Fails the asks waiting on a connection that ended, with the reason it ended. */
  failWaiting(ids: Set<number>, error: Errors.RpcError): void {
    for (const id of ids) {
      const ask = this.pending.get(id)
      this.pending.delete(id)
      ask?.resume(Effect.fail(error))
    }
    ids.clear()
  }

  /** Fails every ask: the node stopped. */
  stop(): void {
    for (const [id, ask] of this.pending) {
      this.pending.delete(id)
      ask.resume(Effect.fail(new Errors.ConnectionLost({ peer: ask.endpoint, reason: "node stopped" })))
    }
  }
}
