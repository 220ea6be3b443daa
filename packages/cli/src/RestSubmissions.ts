/**
 * What a master's REST server runs for a `CreateSubmissionRequest` (its `RestServer.Submissions`): the Kindling
 * driver `ClusterDriver` builds, as `kindling submit --deploy-mode cluster` does.
 *
 * - `appResource` is the app: a `file:` URL or an absolute path of an app module (or of an artifact) on the
 *   master's host, which is bundled and put in the master's artifact store, or the URL of an artifact already
 *   stored there (`kindling://host:port/artifact/<sha256>/<name>`). Anything else is refused.
 * - `appArgs` are its arguments.
 * - `sparkProperties` are its configuration: `spark.x` is read as its twin `kindling.x`, a `kindling.*` key as it
 *   is (and wins over its Spark twin). A Spark property without a Kindling twin is ignored, and the answer says
 *   so; an unknown Kindling key or an ill-typed value refuses the request. Secrets are ignored: a driver gets the
 *   cluster's from its worker.
 * - `environmentVariables` are set for the driver's process, except `KINDLING_*` (configuration travels as
 *   properties) and `SPARK_LOCAL_IP`/`SPARK_LOCAL_HOSTNAME`, which describe the submitting host (Spark drops them
 *   too).
 * - `mainClass` names a JVM class; a Kindling app runs its module's default export, and the answer says the
 *   class was ignored.
 *
 * @since 0.1.0
 */
import { Conf } from "@kindling/conf"
import { DriverConf } from "@kindling/driver"
import { type ArtifactStore, RestServer } from "@kindling/master"
import type { RestMessages } from "@kindling/protocol"
import { NodeArtifacts } from "@kindling/rpc/node"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"
import * as ClusterDriver from "./ClusterDriver.js"

const sparkPrefix = "spark."

// The request's properties as Kindling keys, Spark's twins first so that a Kindling key set too wins.
const translate = (properties: Readonly<Record<string, string>>) => {
  const fromSpark: Record<string, string> = {}
  const own: Record<string, string> = {}
  const ignored: Array<string> = []
  for (const [name, value] of Object.entries(properties)) {
    const key = name.startsWith(sparkPrefix) ? `kindling.${name.slice(sparkPrefix.length)}` : name
    const known = DriverConf.appRegistry.byName.get(key)
    if ((known === undefined && name.startsWith(sparkPrefix)) || known?.secret === true) ignored.push(name)
    else if (name.startsWith(sparkPrefix)) fromSpark[key] = value
    else own[key] = value
  }
  return {
    sources: [{ name: "sparkProperties", values: fromSpark }, { name: "sparkProperties", values: own }],
    ignored
  }
}

const droppedVariable = (name: string) =>
  name.startsWith("KINDLING_") || name === "SPARK_LOCAL_IP" || name === "SPARK_LOCAL_HOSTNAME"

const refused = (reason: string) => new RestServer.SubmissionRefused({ reason })

const accepted = "give a file: URL or an absolute path of the app on the master's host, or the URL of an " +
  "artifact stored on this master"

// The URL of the app in the master's artifact store: bundled and stored from a file, or already stored.
const resolveApp = (artifacts: ArtifactStore.ArtifactStoreService, resource: string) =>
  Effect.gen(function*() {
    if (Option.isSome(NodeArtifacts.parseUrl(resource))) {
      if (yield* artifacts.isStored(resource)) return resource
      return yield* refused(`The artifact ${resource} is not stored on this master: upload it first, or ${accepted}.`)
    }
    let path = resource
    if (/^file:/i.test(resource)) {
      try {
        path = Url.fileURLToPath(resource)
      } catch (error) {
        return yield* refused(`The app resource ${resource} is not a usable file: URL: ${(error as Error).message}`)
      }
    } else if (/^[a-z][a-z0-9+.-]*:/i.test(resource)) {
      return yield* refused(`Unsupported app resource ${resource}: ${accepted}.`)
    }
    if (!Path.isAbsolute(path)) return yield* refused(`The app resource ${resource} is a relative path: ${accepted}.`)
    const stat = yield* Effect.try({
      try: () => Fs.statSync(path, { throwIfNoEntry: false }),
      catch: (error) => refused(`The app ${path} cannot be read: ${(error as Error).message}`)
    })
    if (stat === undefined) return yield* refused(`The app ${path} does not exist on the master's host.`)
    if (!stat.isFile()) return yield* refused(`The app ${path} is not a file.`)
    const bundled = yield* ClusterDriver.bundle(path).pipe(Effect.mapError((error) => refused(error.message)))
    const stored = yield* artifacts.storeFile(bundled.artifact, bundled.name).pipe(
      Effect.mapError((error) => refused(error.message))
    )
    return stored.url
  }).pipe(Effect.scoped)

/**
 * The submissions of the master at `masterUrl`, whose apps go to its artifact store.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly masterUrl: string
  readonly artifacts: ArtifactStore.ArtifactStoreService
}): RestServer.Submissions => ({
  describe: (request: RestMessages.CreateSubmissionRequest) =>
    Effect.gen(function*() {
      const { ignored, sources } = translate(request.sparkProperties)
      // The client named this REST port; the driver registers with the master's RPC port, as in Spark.
      const master = { name: "master", values: { [DriverConf.keys.master.name]: options.masterUrl } }
      const conf = Conf.resolve(DriverConf.appRegistry, [...sources, master])
      if (Either.isLeft(conf)) return yield* refused(conf.left.message)
      const appUrl = yield* resolveApp(options.artifacts, request.appResource)
      const environment = Object.fromEntries(
        Object.entries(request.environmentVariables ?? {}).filter(([name]) => !droppedVariable(name))
      )
      const notes = [
        ...(request.mainClass === undefined
          ? []
          : [`mainClass ${request.mainClass} is ignored: a Kindling app runs its module's default export.`]),
        ...(ignored.length === 0 ? [] : [`Ignored properties Kindling does not use: ${ignored.join(", ")}.`])
      ]
      return {
        description: ClusterDriver.description({
          appUrl,
          master: options.masterUrl,
          conf: conf.right,
          args: request.appArgs ?? [],
          environment
        }),
        notes
      }
    })
})
