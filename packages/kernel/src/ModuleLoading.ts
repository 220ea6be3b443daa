/**
 * How this process loads its modules, for the processes and threads it starts: a role started from the
 * TypeScript sources (in development and tests, through a loader such as tsx and the `@kindling/source` export
 * condition) starts its children the same way; one started from its build passes nothing.
 *
 * @since 0.1.0
 */

const loading = /^--(import|require|loader|experimental-loader|conditions)$/
const loadingWithValue = /^--(import|require|loader|experimental-loader|conditions)=/

/**
 * The flags of this process that decide how modules load — `--import`, `--require`, `--loader`,
 * `--conditions` and their short forms, with their values — and nothing else (a memory limit, say, is the
 * child's own). Specifiers are passed on as they are, so they must be absolute for a child in another directory.
 *
 * @since 0.1.0
 */
export const flags = (argv: ReadonlyArray<string> = process.execArgv): ReadonlyArray<string> => {
  const found: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!
    if (loading.test(flag) || flag === "-r" || flag === "-C") found.push(flag, argv[++i] ?? "")
    else if (loadingWithValue.test(flag)) found.push(flag)
  }
  return found
}
