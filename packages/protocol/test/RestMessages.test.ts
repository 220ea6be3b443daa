import { assert, describe, it } from "@effect/vitest"
import { RestAuth, RestMessages } from "@kindling/protocol"
import { Arbitrary, Effect, Either, Schema } from "effect"

const parsed = (text: string) => Either.getOrThrow(RestMessages.parse(text))
const malformed = (text: string) => Either.flip(RestMessages.parse(text)).pipe(Either.getOrThrow).message

// A message's properties, in the order its JSON text has them (JSON.parse would put integer-like keys first).
const propertyOrder = (text: string) => [...text.matchAll(/^ {2}"([^"]*)" : /gm)].map((match) => match[1]!)

const create = (fields: Record<string, unknown>) =>
  JSON.stringify({
    action: "CreateSubmissionRequest",
    appResource: "file:/apps/pi.ts",
    clientSparkVersion: "4.3.0",
    sparkProperties: {},
    ...fields
  })

describe("RestMessages", () => {
  it.prop(
    "every message roundtrips through its JSON text, keys in alphabetical order",
    [Arbitrary.make(RestMessages.RestMessage)],
    ([message]) => {
      const text = RestMessages.toJson(message)
      const order = propertyOrder(text)
      assert.deepStrictEqual(order, [...order].sort(), text)
      assert.deepStrictEqual(order, Object.keys(JSON.parse(text)), text)
      const back = parsed(text)
      assert.deepStrictEqual(back.unknownFields, [])
      assert.strictEqual(back.message.constructor, message.constructor)
      assert.deepStrictEqual(
        Schema.encodeSync(RestMessages.RestMessage)(back.message),
        Schema.encodeSync(RestMessages.RestMessage)(message)
      )
    }
  )

  it("writes a message as Spark's server does: Jackson's pretty printer, absent fields left out", () => {
    const response = RestMessages.CreateSubmissionResponse.make({
      message: "Driver successfully submitted as driver-20240101000000-0000",
      serverSparkVersion: "0.1.0",
      submissionId: "driver-20240101000000-0000",
      success: true,
      unknownFields: ["extra", "more"]
    })
    assert.strictEqual(
      RestMessages.toJson(response),
      `{
  "action" : "CreateSubmissionResponse",
  "message" : "Driver successfully submitted as driver-20240101000000-0000",
  "serverSparkVersion" : "0.1.0",
  "submissionId" : "driver-20240101000000-0000",
  "success" : true,
  "unknownFields" : [ "extra", "more" ]
}`
    )
    assert.strictEqual(
      RestMessages.toJson(
        RestMessages.SubmissionStatusResponse.make({ serverSparkVersion: "0.1.0", submissionId: "d", success: false })
      ),
      `{\n  "action" : "SubmissionStatusResponse",\n  "serverSparkVersion" : "0.1.0",\n  "submissionId" : "d",\n  "success" : false\n}`
    )
  })

  it("reads a message by its action, null as absent, and reports the fields it does not have", () => {
    const { message, unknownFields } = parsed(create({ mainClass: null, appArgs: ["a"], extra: 1, more: {} }))
    assert.strictEqual(message.action, "CreateSubmissionRequest")
    const request = message as RestMessages.CreateSubmissionRequest
    assert.isUndefined(request.mainClass)
    assert.deepStrictEqual(request.appArgs, ["a"])
    assert.deepStrictEqual(unknownFields, ["extra", "more"])
  })

  it("says what is wrong with a body that is not a message", () => {
    assert.match(malformed("nope"), /^Malformed request: the body is not JSON: /)
    assert.strictEqual(malformed("{}"), "Malformed request: Action field not found in JSON:\n{}")
    assert.strictEqual(malformed("[1]"), "Malformed request: Action field not found in JSON:\n[1]")
    assert.strictEqual(malformed(`{"action":"Foo"}`), "Malformed request: Unknown message type 'Foo'.")
    assert.strictEqual(
      malformed(`{"action":"CreateSubmissionRequest"}`),
      "Malformed request: Validation of message CreateSubmissionRequest failed: appResource: is missing"
    )
    assert.strictEqual(
      malformed(create({ appResource: 5 })),
      "Malformed request: Validation of message CreateSubmissionRequest failed: appResource: Expected string, " +
        "actual 5"
    )
  })

  it("checks the Spark properties Spark's server checks", () => {
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      ["spark.driver.supervise", "maybe", "boolean"],
      ["spark.driver.cores", "two", "numeric"],
      ["spark.cores.max", "", "numeric"],
      ["spark.driver.memory", "lots", "memory"],
      ["spark.executor.memory", "1.5g", "memory"]
    ]
    for (const [key, value, kind] of cases) {
      assert.strictEqual(
        malformed(create({ sparkProperties: { [key]: value } })),
        "Malformed request: Validation of message CreateSubmissionRequest failed: " +
          `Property '${key}' expected ${kind} value: actual was '${value}'.`
      )
    }
    const fine = {
      "spark.driver.supervise": "TRUE",
      "spark.driver.cores": "2",
      "spark.cores.max": "1e1",
      "spark.driver.memory": "512m",
      "spark.executor.memory": "2gb"
    }
    assert.strictEqual(parsed(create({ sparkProperties: fine })).message.action, "CreateSubmissionRequest")
  })
})

describe("RestAuth", () => {
  const secret = "a cluster secret of at least thirty-two bytes"

  it("the key is the secret's UTF-8 bytes", () => {
    assert.deepStrictEqual([...RestAuth.key("né")], [0x6e, 0xc3, 0xa9])
  })

  it.effect("a token signed with the secret passes; any other does not", () =>
    Effect.gen(function*() {
      const token = yield* RestAuth.sign(secret)
      const [header, payload] = token.split(".").slice(0, 2).map((part) =>
        JSON.parse(Buffer.from(part, "base64url").toString())
      )
      assert.deepStrictEqual(header, { alg: "HS256", typ: "JWT" })
      assert.strictEqual(payload.exp - payload.iat, 300)
      yield* RestAuth.verify(secret, RestAuth.header(token))
      const refused = (authorization: string | undefined) =>
        Effect.flip(RestAuth.verify(secret, authorization)).pipe(Effect.map((error) => error.message))
      assert.match(yield* refused(undefined), /^Unauthorized: send Authorization: Bearer <token>/)
      assert.match(yield* refused(`Basic ${token}`), /is not Bearer <token>/)
      assert.match(yield* refused(RestAuth.header(yield* RestAuth.sign("another secret"))), /signature/)
      assert.match(yield* refused(RestAuth.header(yield* RestAuth.sign(secret, { lifetimeSeconds: -60 }))), /exp/)
      // An unsigned token ("alg": "none") with the same claims.
      const unsigned = `${Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url")}.${token.split(".")[1]}.`
      assert.match(yield* refused(RestAuth.header(unsigned)), /not valid/)
    }))
})
