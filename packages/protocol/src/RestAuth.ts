/**
 * Bearer tokens for a master's REST submission server, the scheme of Spark 4's `JWSFilter`: with a cluster secret
 * set, every request carries `Authorization: Bearer <token>`, where the token is a JWS in compact form (RFC 7515)
 * signed with HMAC-SHA256 (`alg: HS256`) over a JSON claims payload. The HMAC key is the UTF-8 bytes of the secret
 * (`kindling.authenticate.secret`) as written, the same bytes the RPC handshake keys its HMAC with; nothing is
 * hashed or decoded first. (Spark's `JWSFilter` reads its key as base64url text: the same key there is the
 * base64url encoding of those bytes.) A token's signature is all that is required; `exp` and `nbf`, when present,
 * are enforced with 30 s of leeway. Kindling's own clients sign a fresh token for each request, valid for five
 * minutes.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"

/**
 * A request without a valid token.
 *
 * @since 0.1.0
 * @category errors
 */
export class TokenRejected extends Data.TaggedError("TokenRejected")<{ readonly reason: string }> {
  override get message() {
    return `Unauthorized: ${this.reason}`
  }
}

/**
 * The HMAC key of a secret: its UTF-8 bytes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const key = (secret: string): Uint8Array => new TextEncoder().encode(secret)

// The JOSE library is loaded when a token is first signed or checked: every process imports this package, few
// of them ever see a token, and the library is dozens of modules.
const jose = () => import("jose")

/**
 * An HS256 token signed with the secret, issued now and valid for `lifetimeSeconds` (default 300).
 *
 * @since 0.1.0
 * @category constructors
 */
export const sign = (secret: string, options: { readonly lifetimeSeconds?: number } = {}): Effect.Effect<string> =>
  Effect.promise(async () =>
    new (await jose()).SignJWT({})
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuedAt()
      .setExpirationTime(`${options.lifetimeSeconds ?? 300}s`)
      .sign(key(secret))
  )

/**
 * The `Authorization` header that carries a token.
 *
 * @since 0.1.0
 * @category constructors
 */
export const header = (token: string): string => `Bearer ${token}`

/**
 * Checks a request's `Authorization` header: a bearer token, HS256, signed with the secret, not expired.
 *
 * @since 0.1.0
 * @category verifying
 */
export const verify = (secret: string, authorization: string | undefined): Effect.Effect<void, TokenRejected> => {
  if (authorization === undefined) {
    return Effect.fail(
      new TokenRejected({ reason: "send Authorization: Bearer <token>, a JWS signed with the secret" })
    )
  }
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization)
  if (bearer === null) {
    return Effect.fail(new TokenRejected({ reason: "the Authorization header is not Bearer <token>" }))
  }
  return Effect.tryPromise({
    try: async () => (await jose()).jwtVerify(bearer[1]!, key(secret), { algorithms: ["HS256"], clockTolerance: 30 }),
    catch: (error) =>
      new TokenRejected({ reason: `the token is not valid: ${error instanceof Error ? error.message : String(error)}` })
  }).pipe(Effect.asVoid)
}
