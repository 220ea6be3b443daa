/**
 * What a master trusts in its recovery store. A store is input from outside the master: what it recovers it acts
 * on (a driver record becomes a process on a worker, as the worker's user), so it takes from a store only what the
 * cluster itself wrote there, and refuses the rest rather than take it over.
 *
 * - ZOOKEEPER with the cluster's secret: every node from the recovery directory down carries the cluster's ACL —
 *   every permission for the digest of its secret, nobody else with more than reading. A directory somebody else
 *   created first is refused, never "secured": its ACL was the only proof of who wrote what is in it.
 * - FILESYSTEM: the directory and every record are owned by the master's user and writable by no other.
 * - With the cluster's secret, in either store, every record is sealed: an HMAC-SHA256 under a key derived from the
 *   secret, over the record's name and text. A record that does not open was not written by a master of this
 *   cluster, whatever else it looks like; this is what vouches for a driver's artifact and command, every field of
 *   them, and it holds even where the store's own protection was weakened (a shared file system, an ACL changed by
 *   ZooKeeper's super user).
 *
 * Without the secret nothing is sealed and ZooKeeper's nodes are open: the store must then be protected by other
 * means (only the masters reach the ensemble), as the README's high-availability section says.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as Crypto from "node:crypto"

/**
 * A node or file of the recovery store that the cluster did not write, or cannot vouch for: nothing is recovered
 * from the store, and the master stops.
 *
 * @since 0.1.0
 * @category errors
 */
export class UntrustedStore extends Data.TaggedError("UntrustedStore")<{
  /** The node or file. */
  readonly path: string
  /** What is wrong with it, as the end of a sentence that starts with its path. */
  readonly reason: string
  /** What an operator can do about it. */
  readonly remedy: string
}> {
  override get message(): string {
    return `Refusing the recovery store: ${this.path} ${this.reason}; ${this.remedy}`
  }
}

// ---- ZooKeeper's ACLs -----------------------------------------------------------------------------------------

/**
 * One entry of a znode's ACL: an identity (`scheme:id`, such as `world:anyone` or `digest:user:<hash>`) and the
 * permissions it has, as ZooKeeper's bit set.
 *
 * @since 0.1.0
 * @category models
 */
export interface AclEntry {
  readonly scheme: string
  readonly id: string
  readonly permissions: number
}

/**
 * ZooKeeper's permission bits.
 *
 * @since 0.1.0
 * @category constants
 */
export const permissions = { read: 1, write: 2, create: 4, delete: 8, admin: 16, all: 31 } as const

const permissionNames = (bits: number) =>
  (["read", "write", "create", "delete", "admin"] as const).filter((name) => (bits & permissions[name]) !== 0)

/**
 * The digest identity of `user:password` credentials, as ZooKeeper stores it in an ACL: `user:<base64 SHA-1>`, so
 * that the password itself is never stored.
 *
 * @since 0.1.0
 * @category constructors
 */
export const digestIdentity = (credentials: string): string => {
  const user = credentials.slice(0, credentials.indexOf(":"))
  return `${user}:${Crypto.createHash("sha1").update(credentials).digest("base64")}`
}

/**
 * Why a node whose ACL is `acl` is not the cluster's (whose digest identity is `identity`), or undefined when it
 * is: the cluster's identity holds every permission and no other identity more than reading. An identity that may
 * administer a node may change its ACL, so it could have written anything there.
 *
 * @since 0.1.0
 * @category judgments
 */
export const aclProblem = (acl: ReadonlyArray<AclEntry>, identity: string): string | undefined => {
  const others = acl.filter((entry) =>
    !(entry.scheme === "digest" && entry.id === identity) &&
    (entry.permissions & ~permissions.read & permissions.all) !== 0
  )
  if (others.length > 0) {
    const who = others.map((entry) =>
      `${entry.scheme}:${entry.id.replace(/:.*/, ":…")} (${permissionNames(entry.permissions).join(", ")})`
    )
    return `is not the cluster's: its ACL also lets ${who.join(" and ")} change it, so it was not created by a ` +
      "master holding the cluster's secret"
  }
  const own = acl.find((entry) => entry.scheme === "digest" && entry.id === identity)
  if (own === undefined || (own.permissions & permissions.all) !== permissions.all) {
    return "is not the cluster's: its ACL does not give the cluster's digest every permission"
  }
  return undefined
}

/**
 * What to do about a znode that is not the cluster's.
 *
 * @since 0.1.0
 * @category constants
 */
export const zooKeeperRemedy = "nothing in it was recovered. Remove it (with ZooKeeper's CLI, authenticated as " +
  "whoever created it or as ZooKeeper's super user) or set kindling.deploy.zookeeper.dir to a directory that no " +
  "one else has created"

// ---- files ----------------------------------------------------------------------------------------------------

/**
 * What a master needs to know of a file or directory of its store (`lstat`'s answer).
 *
 * @since 0.1.0
 * @category models
 */
export interface FileFacts {
  readonly kind: "directory" | "file" | "symbolic link" | "other"
  readonly uid: number
  readonly mode: number
}

/**
 * Why a file of the store (or the store's directory, when `expected` is `"directory"`) cannot be trusted by a
 * master running as user `uid`, or undefined when it can: it is what it should be, owned by that user and writable
 * by no other. A symbolic link is refused: it would make the master read (or write) wherever it points.
 *
 * @since 0.1.0
 * @category judgments
 */
export const fileProblem = (
  facts: FileFacts,
  expected: "directory" | "file",
  uid: number
): string | undefined => {
  if (facts.kind !== expected) return `is a ${facts.kind}, not a ${expected}`
  if (facts.uid !== uid) return `is owned by user ${facts.uid}, not by the master's user (${uid})`
  if ((facts.mode & 0o022) !== 0) {
    return `is writable by ${(facts.mode & 0o002) !== 0 ? "every user" : "its group"} (mode ${
      (facts.mode & 0o7777).toString(8).padStart(4, "0")
    })`
  }
  return undefined
}

/**
 * What to do about a file of a FILESYSTEM store that cannot be trusted.
 *
 * @since 0.1.0
 * @category constants
 */
export const fileRemedy = "nothing in it was recovered. If the master's user wrote it, give it back to that user " +
  "and take write access from others (chown, chmod go-w); otherwise remove it, or set " +
  "kindling.deploy.recoveryDirectory to a directory of the master's own"

// ---- seals ----------------------------------------------------------------------------------------------------

/**
 * How records are sealed and opened: with the cluster's secret, or not at all.
 *
 * @since 0.1.0
 * @category models
 */
export interface Seal {
  /** Whether records are sealed (the cluster has a secret). */
  readonly sealing: boolean
  /** The stored text of the record named `name` whose JSON is `json`. */
  readonly seal: (name: string, json: string) => string
  /** The JSON of the record named `name` stored as `text`, or why the cluster cannot vouch for it. */
  readonly open: (name: string, text: string) => Either.Either<string, string>
}

// The seal is the stored text's last line; a record's JSON is one line.
const sealPrefix = "\nkindling-seal hmac-sha256 "

/**
 * Records sealed with a key derived from the cluster's secret (HKDF-SHA256), or not sealed at all without one. A
 * seal covers the record's name too, so a record cannot be moved under another name (a worker's as a driver's).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSeal = (secret: string | undefined): Seal => {
  if (secret === undefined) {
    return {
      sealing: false,
      seal: (_, json) => json,
      // A seal written by a cluster that had a secret cannot be checked here, and is not needed.
      open: (_, text) => {
        const at = text.lastIndexOf(sealPrefix)
        return Either.right(at === -1 ? text : text.slice(0, at))
      }
    }
  }
  const key = Buffer.from(Crypto.hkdfSync("sha256", secret, "", "kindling recovery record seal", 32))
  const mac = (name: string, json: string) => Crypto.createHmac("sha256", key).update(`${name}\0${json}`).digest()
  return {
    sealing: true,
    seal: (name, json) => `${json}${sealPrefix}${mac(name, json).toString("hex")}`,
    open: (name, text) => {
      const at = text.lastIndexOf(sealPrefix)
      if (at === -1) {
        return Either.left(
          "carries no seal of the cluster: it was written without the cluster's secret (kindling.authenticate), " +
            "so no master of this cluster wrote it"
        )
      }
      const json = text.slice(0, at)
      const given = Buffer.from(text.slice(at + sealPrefix.length).trim(), "hex")
      const expected = mac(name, json)
      return given.length === expected.length && Crypto.timingSafeEqual(given, expected)
        ? Either.right(json)
        : Either.left(
          "carries a seal the cluster's secret does not open: it was written under another secret, altered, or " +
            "moved from another name"
        )
    }
  }
}

/**
 * What to do about a record whose seal does not open.
 *
 * @since 0.1.0
 * @category constants
 */
export const sealRemedy = "nothing was recovered. A record written by masters under another secret or none (or by " +
  "a Kindling that did not seal its records) must be removed, and its driver or app is then forgotten; otherwise " +
  "find out who wrote it"
