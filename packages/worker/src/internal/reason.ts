// The text of a thrown value, for the `reason` of a typed error. fetch() reports a refused connection as "fetch
// failed" and keeps what happened in `cause`, so one level of cause is included.
export const reasonOf = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message
}
