/**
 * `kindling conformance`: plays the protocol's conformance kit (`@kindling/protocol/testing`'s `Conformance`)
 * against one master or worker, Kindling's or another implementation's, and prints a line per check.
 *
 * @since 0.1.0
 */
import { MasterUrl } from "@kindling/protocol"
import { ProtocolConf } from "@kindling/rpc"
import { NodeTransport } from "@kindling/rpc/node"
import { Conformance } from "@kindling/rpc/testing"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Settings from "./Settings.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Args {
  readonly target: string
  readonly role: Conformance.Role
  /** The cluster's secret; else `kindling.authenticate.secret` when `kindling.authenticate` is on. */
  readonly secret: Option.Option<string>
  /** Seconds to wait for each answer. */
  readonly timeout: number
  readonly propertiesFile: Option.Option<string>
  readonly conf: ReadonlyArray<string>
}

/**
 * Runs every check; the exit code is 1 when any failed.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (args: Args): Effect.Effect<number, Settings.Failure> =>
  Effect.gen(function*() {
    const secret = Option.getOrUndefined(args.secret)
    const conf = yield* Settings.load({
      propertiesFile: args.propertiesFile,
      conf: args.conf,
      flags: secret === undefined ? {} : {
        [ProtocolConf.keys.authenticate.name]: "true",
        [ProtocolConf.keys.authenticateSecret.name]: secret
      }
    })
    const rpc = yield* ProtocolConf.rpcOptions(conf)
    const addresses = MasterUrl.parse(args.target)
    if (Either.isLeft(addresses) || addresses.right.length !== 1) {
      const why = Either.isLeft(addresses) ? addresses.left.message : "give exactly one node"
      return yield* new Settings.UsageError({ message: `--target ${args.target}: ${why}` })
    }
    const [address] = addresses.right
    const results = yield* Conformance.run(
      {
        host: address!.host,
        port: address!.port,
        role: args.role,
        secret: rpc.secret,
        timeout: `${args.timeout} seconds`,
        maxFrameSize: rpc.maxFrameSize
      },
      (result) => Console.log(Conformance.format(result))
    ).pipe(Effect.provide(NodeTransport.layerFrom(conf)))
    const failed = results.filter((result) => !result.passed).length
    yield* Console.log(
      `${results.length - failed} of ${results.length} checks passed against the ${args.role} at ${args.target}`
    )
    return failed === 0 ? 0 : 1
  })
