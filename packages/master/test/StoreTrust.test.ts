import { assert, describe, it } from "@effect/vitest"
import { StoreTrust } from "@kindling/master"
import { Either, FastCheck as fc } from "effect"

const { permissions } = StoreTrust
const ours = StoreTrust.digestIdentity("kindling:s3cret")

describe("StoreTrust", () => {
  describe("digestIdentity", () => {
    it("is ZooKeeper's: the user, and the base64 SHA-1 of user:password", () => {
      // As ZooKeeper's DigestAuthenticationProvider.generateDigest("super:test") prints it.
      assert.strictEqual(StoreTrust.digestIdentity("super:test"), "super:D/InIHSb7yEEbrWz8b9l71RjZJU=")
    })
  })

  describe("aclProblem", () => {
    it("accepts the cluster's digest with every permission, alone or beside readers", () => {
      assert.isUndefined(StoreTrust.aclProblem([{ scheme: "digest", id: ours, permissions: permissions.all }], ours))
      assert.isUndefined(
        StoreTrust.aclProblem([
          { scheme: "digest", id: ours, permissions: permissions.all },
          { scheme: "world", id: "anyone", permissions: permissions.read }
        ], ours)
      )
    })

    it("refuses an open node, naming who may change it", () => {
      const problem = StoreTrust.aclProblem([{ scheme: "world", id: "anyone", permissions: permissions.all }], ours)
      assert.match(problem ?? "", /world:anyone \(read, write, create, delete, admin\)/)
    })

    it("refuses another identity with any right beyond reading, even beside the cluster's", () => {
      for (const right of [permissions.write, permissions.create, permissions.delete, permissions.admin]) {
        const problem = StoreTrust.aclProblem([
          { scheme: "digest", id: ours, permissions: permissions.all },
          { scheme: "digest", id: "mallory:abc=", permissions: right | permissions.read }
        ], ours)
        // The other identity's hash is not echoed.
        assert.match(problem ?? "", /digest:mallory:… \(read, \w+\)/)
      }
    })

    it("refuses a node where the cluster's digest lacks a permission, or is absent", () => {
      assert.match(
        StoreTrust.aclProblem(
          [{ scheme: "digest", id: ours, permissions: permissions.all & ~permissions.admin }],
          ours
        ) ??
          "",
        /does not give the cluster's digest every permission/
      )
      assert.isDefined(StoreTrust.aclProblem([], ours))
      assert.isDefined(
        StoreTrust.aclProblem(
          [{ scheme: "digest", id: StoreTrust.digestIdentity("kindling:other"), permissions: 31 }],
          ours
        )
      )
    })

    it("is undefined exactly when no other identity can change the node and the cluster can do everything", () =>
      fc.assert(
        fc.property(
          fc.array(
            fc.record({
              scheme: fc.constantFrom("digest", "world", "ip", "auth"),
              id: fc.constantFrom(ours, "anyone", "127.0.0.1", "mallory:x="),
              permissions: fc.integer({ min: 0, max: 31 })
            }),
            { maxLength: 4 }
          ),
          (acl) => {
            const isOurs = (e: StoreTrust.AclEntry) => e.scheme === "digest" && e.id === ours
            const expected = acl.every((e) => isOurs(e) || (e.permissions & ~permissions.read) === 0) &&
              acl.some((e) => isOurs(e) && e.permissions === permissions.all)
            // Several entries of the cluster's own identity: ZooKeeper keeps the first; any full one is enough here.
            if (acl.filter(isOurs).length > 1) return
            assert.strictEqual(StoreTrust.aclProblem(acl, ours) === undefined, expected)
          }
        )
      ))
  })

  describe("fileProblem", () => {
    const uid = 1000
    it("accepts the master's own directory and files that no one else may write", () => {
      assert.isUndefined(StoreTrust.fileProblem({ kind: "directory", uid, mode: 0o40700 }, "directory", uid))
      assert.isUndefined(StoreTrust.fileProblem({ kind: "directory", uid, mode: 0o40755 }, "directory", uid))
      assert.isUndefined(StoreTrust.fileProblem({ kind: "file", uid, mode: 0o100644 }, "file", uid))
    })

    it("refuses what another user owns, what others may write, links and the wrong kind", () => {
      assert.match(
        StoreTrust.fileProblem({ kind: "file", uid: 65534, mode: 0o100600 }, "file", uid) ?? "",
        /owned by user 65534, not by the master's user \(1000\)/
      )
      assert.match(
        StoreTrust.fileProblem({ kind: "directory", uid, mode: 0o41777 }, "directory", uid) ?? "",
        /writable by every user \(mode 1777\)/
      )
      assert.match(
        StoreTrust.fileProblem({ kind: "file", uid, mode: 0o100664 }, "file", uid) ?? "",
        /writable by its group \(mode 0664\)/
      )
      assert.match(
        StoreTrust.fileProblem({ kind: "symbolic link", uid, mode: 0o120777 }, "file", uid) ?? "",
        /is a symbolic link, not a file/
      )
      assert.match(
        StoreTrust.fileProblem({ kind: "file", uid, mode: 0o100600 }, "directory", uid) ?? "",
        /not a directory/
      )
    })
  })

  describe("seals", () => {
    const sealed = StoreTrust.makeSeal("s3cret")
    const json = fc.json().filter((text) => !text.includes("\n"))

    it("a sealed record opens under its name to its JSON", () =>
      fc.assert(
        fc.property(fc.string(), json, (name, text) => {
          assert.deepStrictEqual(sealed.open(name, sealed.seal(name, text)), Either.right(text))
        })
      ))

    it("any change to the text, another name or another secret does not open", () =>
      fc.assert(
        fc.property(fc.string({ minLength: 1 }), json, fc.nat(), (name, text, at) => {
          const stored = sealed.seal(name, text)
          const i = at % stored.length
          const altered = stored.slice(0, i) + String.fromCharCode(stored.charCodeAt(i) ^ 1) + stored.slice(i + 1)
          assert.isTrue(Either.isLeft(sealed.open(name, altered)))
          assert.isTrue(Either.isLeft(sealed.open(`${name}x`, stored)))
          assert.isTrue(Either.isLeft(StoreTrust.makeSeal("other").open(name, stored)))
        })
      ))

    it("an unsealed record is refused with the secret, and read as it is without one", () => {
      const text = "{\"id\":\"driver-1\"}"
      const refused = sealed.open("driver_driver-1", text)
      assert.isTrue(Either.isLeft(refused))
      assert.match(Either.getLeft(refused).pipe((o) => (o._tag === "Some" ? o.value : "")), /carries no seal/)
      const open = StoreTrust.makeSeal(undefined)
      assert.deepStrictEqual(open.open("driver_driver-1", text), Either.right(text))
      // A record sealed by a cluster that had a secret is still read by one that has none.
      assert.deepStrictEqual(open.open("driver_driver-1", sealed.seal("driver_driver-1", text)), Either.right(text))
    })

    it("the error names the node, what is wrong and what to do, in one line", () => {
      const error = new StoreTrust.UntrustedStore({
        path: "/kindling/master_status",
        reason: "is not the cluster's: …",
        remedy: StoreTrust.zooKeeperRemedy
      })
      assert.match(error.message, /^Refusing the recovery store: \/kindling\/master_status is not the cluster's/)
      assert.match(error.message, /kindling\.deploy\.zookeeper\.dir/)
      assert.notInclude(error.message, "\n")
    })
  })
})
