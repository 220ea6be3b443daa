/**
 * Secure by default: a port that would run code for whoever reaches it (a master's or worker's RPC port, the
 * REST submission port) opens on an address other than loopback only with a secret, or when the operator has
 * turned authentication off in so many words (`kindling.authenticate=false`), which is then logged at start.
 * Spark's default is the other way round, and anyone who reached port 7077 could have a worker run their code
 * (CVE-2018-11770, CVE-2020-9480). On loopback the default stays open, for quick starts on one machine.
 *
 * @since 0.1.0
 */
import type { Conf, Registry } from "@kindling/conf"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Dns from "node:dns/promises"
import * as ProtocolConf from "./ProtocolConf.js"

/**
 * A node would listen beyond this machine with nothing to tell its clients from anyone else.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unprotected extends Data.TaggedError("Unprotected")<{
  /** What would listen, as the message's subject: "The master", "The REST server". */
  readonly service: string
  readonly host: string
  /** What `host` resolves to; none when it does not resolve. */
  readonly addresses: ReadonlyArray<string>
  /** The flag or key that sets `host`. */
  readonly hostSetting: string
  /** How to give it a secret. */
  readonly secretSetting: string
}> {
  override get message() {
    const where = this.addresses.length === 0 ? "which resolves to no address" : `(${this.addresses.join(", ")})`
    return `${this.service} would listen on ${this.host} ${where}, not a loopback address, without a secret: ` +
      `anyone who reaches it could run code on the cluster. Set ${this.secretSetting}, listen on a loopback ` +
      `address (${this.hostSetting}), or set ${ProtocolConf.keys.authenticate.name}=false to run it without ` +
      "authentication."
  }
}

/**
 * Whether the operator turned authentication off explicitly: `kindling.authenticate=false` from any source but
 * the default.
 *
 * @since 0.1.0
 * @category constructors
 */
export const optedOut = (conf: Conf.Conf<Registry.KeyOf<typeof ProtocolConf.group>>): boolean =>
  !conf.get(ProtocolConf.keys.authenticate) &&
  conf.entries.some((entry) => entry.key === ProtocolConf.keys.authenticate.name && entry.source !== "default")

const isLoopback = (address: string) => address === "::1" || /^(::ffff:)?127\./i.test(address)

/**
 * Succeeds when `service` may listen on `host`: with a secret, on an address that resolves to loopback only, or
 * when the operator opted out of authentication (with a warning logged). Fails with `Unprotected` otherwise.
 *
 * @since 0.1.0
 * @category checks
 */
export const check = (options: {
  readonly service: string
  readonly host: string
  readonly hostSetting: string
  /** The secret the listener will check its clients with, if any. */
  readonly secret: string | undefined
  readonly secretSetting: string
  readonly optedOut: boolean
}): Effect.Effect<void, Unprotected> =>
  Effect.gen(function*() {
    if (options.secret !== undefined) return
    const addresses = yield* Effect.promise(() =>
      Dns.lookup(options.host, { all: true }).then((found) => found.map((entry) => entry.address), () => [])
    )
    if (addresses.length > 0 && addresses.every(isLoopback)) return
    const refusal = new Unprotected({ ...options, addresses })
    if (!options.optedOut) return yield* refusal
    yield* Effect.logWarning(
      `${options.service} listens on ${options.host} without authentication ` +
        `(${ProtocolConf.keys.authenticate.name}=false): anyone who reaches it can run code on the cluster`
    )
  })
