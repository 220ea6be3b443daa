/**
 * HTTPS for the web UIs and the REST port (`kindling.ssl.*`, Spark's `spark.ssl.*`): a certificate chain and a
 * private key in PEM files, set once for every server or per kind of server as Spark's namespaces do — `ui` (an
 * app's UI), `standalone` (the master's and workers' UIs and the master's REST port), `historyServer` — and the
 * certificates the command-line clients trust besides the system's. Everything is read and checked when a node
 * starts, so a wrong file is one line there rather than a failed handshake later.
 *
 * @since 0.1.0
 */
import { type Conf, Key, Problem, Registry, ValueType } from "@kindling/conf"
import * as Either from "effect/Either"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import type * as WebServer from "./WebServer.js"

const enabled = Key.make("kindling.ssl.enabled", ValueType.boolean, {
  default: "false",
  description: "Serve the web UIs and the master's REST port over HTTPS with kindling.ssl.certChain and " +
    "kindling.ssl.privateKey. kindling.ssl.ui.*, kindling.ssl.standalone.* and kindling.ssl.historyServer.* " +
    "override it and the keys below for app UIs, for the master's and workers' UIs and REST port, and for the " +
    "history server."
})
const certChain = Key.make("kindling.ssl.certChain", ValueType.string, {
  description: "A PEM file: the server's certificate, then any intermediate certificates."
})
const privateKey = Key.make("kindling.ssl.privateKey", ValueType.string, {
  description: "A PEM file: the private key of the certificate (PKCS#8 or the key's own format, encrypted or not)."
})
const privateKeyPassword = Key.make("kindling.ssl.privateKeyPassword", ValueType.string, {
  secret: true,
  description: "The passphrase of an encrypted kindling.ssl.privateKey."
})

/**
 * The kinds of server, as Spark's SSL namespaces name them.
 *
 * @since 0.1.0
 * @category models
 */
export type Namespace = "ui" | "standalone" | "historyServer"

const serves: Record<Namespace, string> = {
  ui: "an app's web UI",
  standalone: "the master's and workers' web UIs and the master's REST port",
  historyServer: "the history server"
}

const namespaced = <N extends Namespace>(namespace: N) => ({
  enabled: Key.make(`kindling.ssl.${namespace}.enabled` as const, ValueType.boolean, {
    fallback: enabled,
    description: `HTTPS for ${serves[namespace]}.`
  }),
  certChain: Key.make(`kindling.ssl.${namespace}.certChain` as const, ValueType.string, {
    fallback: certChain,
    description: `The certificate chain (PEM) of ${serves[namespace]}.`
  }),
  privateKey: Key.make(`kindling.ssl.${namespace}.privateKey` as const, ValueType.string, {
    fallback: privateKey,
    description: `The private key (PEM) of ${serves[namespace]}.`
  }),
  privateKeyPassword: Key.make(`kindling.ssl.${namespace}.privateKeyPassword` as const, ValueType.string, {
    secret: true,
    fallback: privateKeyPassword,
    description: `The passphrase of the private key of ${serves[namespace]}.`
  })
})

const namespaces = {
  ui: namespaced("ui"),
  standalone: namespaced("standalone"),
  historyServer: namespaced("historyServer")
}

/**
 * @since 0.1.0
 * @category keys
 */
export const keys = {
  enabled,
  certChain,
  privateKey,
  privateKeyPassword,
  trustStore: Key.make("kindling.ssl.trustStore", ValueType.string, {
    description: "A PEM file of CA certificates that kindling submit, status and kill trust, besides the " +
      "system's, when they talk to a REST port over HTTPS (a cluster's own CA, or a self-signed certificate)."
  }),
  ui: namespaces.ui,
  standalone: namespaces.standalone,
  historyServer: namespaces.historyServer
}

// A namespace's keys under names of their own in the group.
const prefixed = <N extends Namespace, K extends Record<string, Key.Any>>(namespace: N, keys: K) =>
  Object.fromEntries(Object.entries(keys).map(([name, key]) => [`${namespace}.${name}`, key])) as {
    readonly [P in keyof K & string as `${N}.${P}`]: K[P]
  }

/**
 * @since 0.1.0
 * @category keys
 */
export const group = Registry.group({
  title: "TLS",
  description: "HTTPS for the web UIs and the master's REST port, and what the command-line clients trust.",
  keys: {
    enabled,
    certChain,
    privateKey,
    privateKeyPassword,
    trustStore: keys.trustStore,
    ...prefixed("ui", namespaces.ui),
    ...prefixed("standalone", namespaces.standalone),
    ...prefixed("historyServer", namespaces.historyServer)
  }
})

type Keys = Registry.KeyOf<typeof group>

const invalid = (conf: Conf.Conf<Keys>, key: Key.Any, reason: string) =>
  Either.left(
    new Problem.InvalidConf({
      problems: [{
        _tag: "InvalidValue",
        source: conf.entries.find((entry) => entry.key === key.name)?.source ?? "default",
        key: key.name,
        reason
      }]
    })
  )

const missing = (key: Key.Any, reason: string) =>
  Either.left(new Problem.InvalidConf({ problems: [{ _tag: "MissingValue", key: key.name, reason }] }))

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

const readPem = (path: string): Either.Either<string, string> => {
  try {
    return Either.right(Fs.readFileSync(path, "utf8"))
  } catch (error) {
    return Either.left(`cannot read ${path}: ${messageOf(error)}`)
  }
}

/**
 * What a server of kind `namespace` proves itself with, read and checked: undefined when HTTPS is off for it; a
 * configuration problem (one line each) when a file is missing or unreadable, is not what it should be, the key
 * is not the certificate's, or the certificate has expired.
 *
 * @since 0.1.0
 * @category constructors
 */
export const serverTls = (
  conf: Conf.Conf<Keys>,
  namespace: Namespace
): Either.Either<WebServer.Tls | undefined, Problem.InvalidConf> => {
  const keys = namespaces[namespace]
  if (!conf.get(keys.enabled)) return Either.right(undefined)
  const certPath = conf.get(keys.certChain)
  const keyPath = conf.get(keys.privateKey)
  if (certPath === undefined) return missing(keys.certChain, `${keys.enabled.name} is true`)
  if (keyPath === undefined) return missing(keys.privateKey, `${keys.enabled.name} is true`)
  const certPem = readPem(certPath)
  if (Either.isLeft(certPem)) return invalid(conf, keys.certChain, certPem.left)
  const keyPem = readPem(keyPath)
  if (Either.isLeft(keyPem)) return invalid(conf, keys.privateKey, keyPem.left)
  const passphrase = conf.get(keys.privateKeyPassword)
  let certificate: Crypto.X509Certificate
  try {
    certificate = new Crypto.X509Certificate(certPem.right)
  } catch (error) {
    return invalid(conf, keys.certChain, `${certPath} holds no PEM certificate (${messageOf(error)})`)
  }
  let key: Crypto.KeyObject
  try {
    key = Crypto.createPrivateKey({ key: keyPem.right, ...(passphrase === undefined ? {} : { passphrase }) })
  } catch (error) {
    const why = passphrase === undefined ? "or it is encrypted and has no passphrase" : "or its passphrase is wrong"
    return invalid(conf, keys.privateKey, `${keyPath} is not a PEM private key, ${why} (${messageOf(error)})`)
  }
  if (!certificate.checkPrivateKey(key)) {
    return invalid(conf, keys.privateKey, `${keyPath} is not the key of the certificate in ${certPath}`)
  }
  if (Date.parse(certificate.validTo) < Date.now()) {
    return invalid(conf, keys.certChain, `the certificate in ${certPath} expired on ${certificate.validTo}`)
  }
  return Either.right({
    certChain: certPem.right,
    privateKey: keyPem.right,
    ...(passphrase === undefined ? {} : { passphrase })
  })
}

/**
 * The CA certificates of `kindling.ssl.trustStore` (PEM), undefined when it is not set; a configuration problem
 * when the file cannot be read or holds no certificate.
 *
 * @since 0.1.0
 * @category constructors
 */
export const trustedCertificates = (conf: Conf.Conf<Keys>): Either.Either<string | undefined, Problem.InvalidConf> => {
  const path = conf.get(keys.trustStore)
  if (path === undefined) return Either.right(undefined)
  const pem = readPem(path)
  if (Either.isLeft(pem)) return invalid(conf, keys.trustStore, pem.left)
  try {
    new Crypto.X509Certificate(pem.right)
  } catch (error) {
    return invalid(conf, keys.trustStore, `${path} holds no PEM certificate (${messageOf(error)})`)
  }
  return Either.right(pem.right)
}
