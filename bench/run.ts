// `pnpm bench <name>`: builds the packages, then runs bench/<name>.ts against the built code (dist/), which is
// what users run. Benchmarks print figures next to a baseline measured in the same
// run, as ratios; they are not tests and CI does not run them.
const name = process.argv[2]
const known = [
  "allocation",
  "curves",
  "elastic",
  "eventlog",
  "failover",
  "formats",
  "hostile",
  "protocol",
  "scheduling",
  "simulation",
  "spark",
  "startup",
  "tasks",
  "transfer",
  "ui",
  "wordcount"
]
if (name === undefined || !known.includes(name)) {
  console.error(`usage: pnpm bench <${known.join("|")}>`)
  process.exit(2)
}
await import(`./${name}.js`)
