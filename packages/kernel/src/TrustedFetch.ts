/**
 * The requests of the command-line REST client, on `node:http` and `node:https`: unlike the built-in `fetch`, it
 * can trust CA certificates besides the system's (`kindling.ssl.trustStore`), and it says what is wrong with a
 * certificate it refuses in one line that names the setting to change.
 *
 * @since 0.1.0
 */
import * as Http from "node:http"
import * as Https from "node:https"
import * as Tls from "node:tls"

/**
 * A request, as much of `fetch`'s as the REST client uses.
 *
 * @since 0.1.0
 * @category models
 */
export interface Init {
  readonly method: string
  readonly headers: Readonly<Record<string, string>>
  readonly signal: AbortSignal
  readonly body?: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Answer {
  readonly status: number
  readonly text: () => Promise<string>
}

// Node's codes for a certificate the client cannot trust, and what to do about each.
const untrusted = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_GET_ISSUER_CERT"
])

const describe = (error: NodeJS.ErrnoException, url: URL): string => {
  const code = error.code ?? ""
  // OpenSSL's messages run over several lines.
  const message = error.message.replace(/\s*\n\s*/g, " ").trim()
  if (untrusted.has(code)) {
    return `the certificate of ${url.host} is not trusted (${message}): give its CA certificate in ` +
      "kindling.ssl.trustStore"
  }
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    return `the certificate of ${url.host} is not for that name (${message})`
  }
  if (code === "CERT_HAS_EXPIRED" || code === "CERT_NOT_YET_VALID") {
    return `the certificate of ${url.host} is not valid now (${message})`
  }
  if (code === "EPROTO" || code.startsWith("ERR_SSL")) {
    return `${url.host} does not speak TLS as expected (${message}): is it an http:// port?`
  }
  return message
}

/**
 * A `fetch` for `http:` and `https:` URLs that trusts the system's CAs and `trusted` (PEM), when given. Failures
 * reject with an `Error` whose message is one line.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (trusted?: string) => (url: string, init: Init): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const target = new URL(url)
    const secure = target.protocol === "https:"
    const options: Https.RequestOptions = {
      method: init.method,
      headers: init.headers,
      signal: init.signal,
      ...(secure && trusted !== undefined ? { ca: [...Tls.rootCertificates, trusted] } : {})
    }
    const request = (secure ? Https : Http).request(target, options, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.once("error", (error) => reject(new Error(describe(error, target))))
      response.once("end", () => {
        const body = Buffer.concat(chunks).toString("utf8")
        resolve({ status: response.statusCode ?? 0, text: () => Promise.resolve(body) })
      })
    })
    request.once("error", (error) => reject(new Error(describe(error, target))))
    request.end(init.body)
  })
