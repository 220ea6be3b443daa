// Datasets read from and written to a real S3-compatible store (SeaweedFS on loopback), by apps submitted to
// local[2] and to local-cluster with the store's settings as `kindling.hadoop.fs.s3a.*`: random records of
// every field type written as Parquet, CSV and JSON lines come back equal; a multipart upload's object appears
// only once whole; a finished write leaves its parts and `_SUCCESS`, nothing else.
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client
} from "@aws-sdk/client-s3"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { app, root, run, temporaryDirectory } from "./fixtures/cluster.js"
import { type S3Server, s3Server } from "./fixtures/s3Server.js"

// This test's own client: the SDK would warn that its releases after January 2027 need Node 22.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true"

// Random records of every field type from a seed (scripts/compat/rows.ts), written and read back in each format;
// prints whether each came back equal.
const roundtrip = `import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"
import { isDeepStrictEqual } from "node:util"
import { byId, fields, rows as records } from "${root}/scripts/compat/rows.ts"

export default App.make(([root, seed, n]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const all = records(Number(seed), Number(n))
    const dataset = kc.parallelize(all, 3)
    const expected = [...all].sort(byId)
    const results: Array<string> = []
    yield* dataset.write.parquet(\`\${root}/parquet\`, { fields, rowGroupSize: 50 })
    const parquet = yield* kc.read.parquet(\`\${root}/parquet\`)
    results.push(\`parquet \${isDeepStrictEqual((yield* parquet.collect()).sort(byId), expected)}\`)
    yield* dataset.write.csv(\`\${root}/csv\`, { fields, header: true, compression: "zstd" })
    const csv = yield* kc.read.csv(\`\${root}/csv\`, { fields, header: true })
    results.push(\`csv \${isDeepStrictEqual((yield* csv.collect()).sort(byId), expected)}\`)
    yield* dataset.write.json(\`\${root}/json\`, { fields })
    const json = yield* kc.read.json(\`\${root}/json\`, { fields, minPartitions: 4 })
    results.push(\`json \${isDeepStrictEqual((yield* json.collect() as any).sort(byId), expected)}\`)
    // A group-by over the Parquet read back, written as CSV.
    const perDay = yield* parquet
      .filter((r) => r.ok === true)
      .map((r) => [r.ok, 1] as const)
      .reduceByKey((a, b) => a + b)
      .collect()
    results.push(\`ok \${perDay.map(([, count]) => count).join()}\`)
    yield* Console.log(results.join("; "))
  }))
`

// Sales rows as Parquet in a bucket, for the README's example: 3 files of rows over 5 countries.
const salesWriter = `import { App, Kindling } from "@kindling/app"
import { Context, Effect, Layer } from "effect"
export default App.make(([out]) =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const countries = ["fr", "de", "jp", "br", "ca"]
    const sales = kc.range(0, 3000, 1, 3).map((i) => ({ id: i, country: countries[i % 5], amount: (i % 97) + 0.25 }))
    yield* sales.write.parquet(out!, { fields: "id INT, country STRING, amount DOUBLE" })
  }))
`

const clientOf = (server: S3Server) =>
  new S3Client({
    endpoint: server.endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey }
  })

const keysUnder = (client: S3Client, bucket: string, prefix: string) =>
  Effect.promise(async () => {
    const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))
    return (listed.Contents ?? []).map((object) => object.Key!.slice(prefix.length)).sort()
  })

const s3Conf = (server: S3Server) => [
  "--conf",
  `kindling.hadoop.fs.s3a.endpoint=${server.endpoint}`,
  "--conf",
  `kindling.hadoop.fs.s3a.access.key=${server.accessKeyId}`,
  "--conf",
  `kindling.hadoop.fs.s3a.secret.key=${server.secretAccessKey}`
]

// One store for all the tests (it takes seconds to start); each test has buckets of its own.
class S3 extends Context.Tag("S3")<S3, S3Server>() {}

layer(Layer.scoped(S3, s3Server), { excludeTestServices: true, timeout: 120_000 })("object storage", (it) => {
  it.scoped(
    "records of every type roundtrip through Parquet, CSV and JSON lines, on s3:// and local files, in both modes",
    () =>
      Effect.gen(function*() {
        const server = yield* S3
        const client = clientOf(server)
        yield* Effect.promise(() => client.send(new CreateBucketCommand({ Bucket: "datasets" })))
        const dir = yield* temporaryDirectory
        const source = app(dir, "roundtrip.ts", roundtrip)
        // On local files in local-cluster too (local[2] on local files is FileFormats.test.ts's).
        const local = yield* run(["submit", "--master", "local-cluster[2,1,1024]", source, `${dir}/local`, "13", "400"])
        assert.strictEqual(local.code, 0, local.stderr)
        assert.match(local.stdout.trim(), /^parquet true; csv true; json true; ok \d+$/)
        for (const [master, seed] of [["local[2]", 11], ["local-cluster[2,1,1024]", 12]] as const) {
          const root = `s3://datasets/run-${seed}`
          const result = yield* run([
            "submit",
            "--master",
            master,
            ...s3Conf(server),
            source,
            root,
            String(seed),
            "400"
          ])
          assert.strictEqual(result.code, 0, result.stderr)
          assert.match(result.stdout.trim(), /^parquet true; csv true; json true; ok \d+$/)
          // Each write left its parts and _SUCCESS, and nothing of its attempts.
          for (const format of ["parquet", "csv", "json"]) {
            const keys = yield* keysUnder(client, "datasets", `run-${seed}/${format}/`)
            assert.includeMembers(keys, ["_SUCCESS"])
            assert.strictEqual(keys.filter((key) => key.startsWith("part-")).length, 3, keys.join())
            assert.deepStrictEqual(keys.filter((key) => !key.startsWith("part-") && key !== "_SUCCESS"), [])
          }
        }
      }),
    { timeout: 240_000 }
  )

  it.scoped("the README's example: Parquet from s3://, a group-by, CSV written back", () =>
    Effect.gen(function*() {
      const server = yield* S3
      const client = clientOf(server)
      yield* Effect.promise(() => client.send(new CreateBucketCommand({ Bucket: "shop" })))
      const dir = yield* temporaryDirectory
      const written = yield* run([
        "submit",
        "--master",
        "local[2]",
        ...s3Conf(server),
        app(dir, "sales.ts", salesWriter),
        "s3://shop/sales"
      ])
      assert.strictEqual(written.code, 0, written.stderr)
      const report = yield* run([
        "submit",
        "--master",
        "local-cluster[2,1,1024]",
        ...s3Conf(server),
        "examples/parquet-report.ts",
        "s3://shop/sales/*.parquet",
        "s3://shop/reports/by-country"
      ])
      assert.strictEqual(report.code, 0, report.stderr)
      // The plain computation of the same report.
      const totals = new Map<string, number>()
      for (let i = 0; i < 3000; i++) {
        const country = ["fr", "de", "jp", "br", "ca"][i % 5]!
        totals.set(country, (totals.get(country) ?? 0) + (i % 97) + 0.25)
      }
      const expected = [...totals].map(([country, total]) => [country, Math.round(total * 100) / 100] as const)
        .sort((a, b) => b[1] - a[1])
      assert.strictEqual(
        report.stdout,
        expected.slice(0, 3).map(([country, total]) => `${country}\t${total}\n`).join("")
      )
      const keys = yield* keysUnder(client, "shop", "reports/by-country/")
      assert.deepStrictEqual(keys.filter((key) => !key.startsWith("part-")), ["_SUCCESS"])
      const csv = yield* Effect.promise(async () => {
        const object = await client.send(
          new GetObjectCommand({ Bucket: "shop", Key: `reports/by-country/${keys.find((k) => k.startsWith("part-"))}` })
        )
        return object.Body!.transformToString()
      })
      assert.strictEqual(csv, `country,total\n${expected.map(([country, total]) => `${country},${total}\n`).join("")}`)
    }), { timeout: 240_000 })

  it.scoped(
    "a 40 MiB output is uploaded in parts, and read back whole from ranged splits",
    () =>
      Effect.gen(function*() {
        const server = yield* S3
        const client = clientOf(server)
        yield* Effect.promise(() => client.send(new CreateBucketCommand({ Bucket: "logs" })))
        // 40 MiB of lines written by one task: five parts of 8 MiB.
        const lines = Array.from({ length: 1 << 16 }, (_, i) => `${String(i).padStart(8, "0")} ${"x".repeat(630)}`)
        yield* Effect.promise(() =>
          client.send(new PutObjectCommand({ Bucket: "logs", Key: "in/one.txt", Body: lines.join("\n") + "\n" }))
        )
        const dir = yield* temporaryDirectory
        const source = app(
          dir,
          "copy.ts",
          `import { App, Kindling } from "@kindling/app"
import { Console, Effect } from "effect"
export default App.make(() =>
  Effect.gen(function*() {
    const kc = yield* Kindling
    const lines = kc.textFile("s3://logs/in/*.txt", 6)
    yield* Console.log(\`partitions \${yield* lines.numPartitions} lines \${yield* lines.count()}\`)
    yield* lines.coalesce(1).saveAsTextFile("s3://logs/out")
  }))
`
        )
        const result = yield* run(["submit", "--master", "local[2]", ...s3Conf(server), source])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.strictEqual(result.stdout.trim(), `partitions 6 lines ${lines.length}`)
        assert.deepStrictEqual(yield* keysUnder(client, "logs", "out/"), ["_SUCCESS", "part-00000"])
        const copied = yield* Effect.promise(async () => {
          const object = await client.send(new GetObjectCommand({ Bucket: "logs", Key: "out/part-00000" }))
          return object.Body!.transformToString()
        })
        assert.strictEqual(copied, lines.join("\n") + "\n")
      }),
    { timeout: 240_000 }
  )
})
