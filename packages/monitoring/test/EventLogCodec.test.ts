import { assert, describe, it } from "@effect/vitest"
import type { AppEvents } from "@kindling/app"
import { AppStatus, EventLogCodec, SparkEvents } from "@kindling/monitoring"
import { FastCheck as fc, Schema } from "effect"

// Events of a few stages on a few executors: tasks start and end (some twice, some never started, some failed or
// killed, with odd metrics), between executors joining and jobs starting.
const text = fc.oneof(fc.constantFrom("1", "driver", "exec \"2\"", "é\n\\"), fc.string({ maxLength: 6 }))
const number = fc.oneof(fc.integer({ min: -5, max: 2 ** 40 }), fc.double(), fc.constant(0))
const metrics = fc.dictionary(
  fc.constantFrom(
    "duration",
    "shuffleBytesRead",
    "shuffleRemoteBytesRead",
    "shuffleRecordsRead",
    "shuffleBytesWritten",
    "shuffleRecordsWritten",
    "spilledBytes",
    "other"
  ),
  number
)
const event: fc.Arbitrary<AppEvents.AppEvent> = fc.oneof(
  fc.record({
    _tag: fc.constant("ExecutorAdded" as const),
    time: number,
    executorId: text,
    host: text,
    cores: fc.nat()
  }),
  fc.record({
    _tag: fc.constant("ExecutorDecommissioned" as const),
    time: number,
    executorId: text,
    reason: text
  }),
  fc.record({
    _tag: fc.constant("JobStart" as const),
    time: number,
    jobId: fc.nat(3),
    stageIds: fc.array(fc.nat(3), { maxLength: 3 }),
    stages: fc.constant([]),
    pool: text
  }),
  fc.record({
    _tag: fc.constant("TaskStart" as const),
    stageId: fc.nat(3),
    stageAttempt: fc.nat(1),
    taskId: fc.nat(8),
    index: fc.nat(5),
    executorId: text,
    locality: fc.constantFrom("PROCESS_LOCAL" as const, "NODE_LOCAL" as const, "ANY" as const),
    time: number
  }),
  fc.record({
    _tag: fc.constant("TaskEnd" as const),
    stageId: fc.nat(3),
    stageAttempt: fc.nat(1),
    taskId: fc.nat(8),
    succeeded: fc.boolean(),
    reason: fc.oneof(text, fc.constant("KILLED"), text.map((why) => `TaskKilled (${why})`), fc.constant("Boom: no")),
    metrics,
    time: number
  }, { requiredKeys: ["_tag", "stageId", "stageAttempt", "taskId", "succeeded", "metrics", "time"] })
)

describe("EventLogCodec", () => {
  it.prop(
    "a log's lines are the JSON of Spark's events, key for key",
    [fc.array(event, { maxLength: 60 })],
    ([events]) => {
      const byLines = EventLogCodec.makeEncoder()
      const byObjects = EventLogCodec.makeEncoder()
      for (const appEvent of events) {
        assert.deepStrictEqual(
          EventLogCodec.encodeLines(byLines, appEvent),
          EventLogCodec.encode(byObjects, appEvent).map((sparkEvent) => JSON.stringify(sparkEvent))
        )
      }
    },
    { fastCheck: { numRuns: 300 } }
  )
})

describe("an executor's decommissioning in the event log", () => {
  it("is Kindling's own event, named as a class Spark's reader cannot load (which it drops), and replays", () => {
    const decommissioned = {
      _tag: "ExecutorDecommissioned" as const,
      executorId: "4",
      reason: "Executor decommission (worker decommissioned)",
      time: 1_000
    }
    const [line] = EventLogCodec.encodeLines(EventLogCodec.makeEncoder(), decommissioned)
    assert.deepStrictEqual(JSON.parse(line!), {
      Event: "org.kindling.scheduler.ExecutorDecommissioned",
      Timestamp: 1_000,
      "Executor ID": "4",
      Reason: "Executor decommission (worker decommissioned)"
    })
    const decoded = Schema.decodeUnknownSync(SparkEvents.SparkEvent)(JSON.parse(line!))
    const replay = EventLogCodec.makeReplay()
    assert.deepStrictEqual(EventLogCodec.replay(replay, decoded), [decommissioned])
    // The app's status, live or replayed, shows the executor decommissioning until it is removed.
    const status = AppStatus.make()
    AppStatus.apply(status, { _tag: "ExecutorAdded", executorId: "4", host: "h", cores: 1, time: 0 })
    AppStatus.apply(status, decommissioned)
    assert.deepStrictEqual(status.executors.get("4")?.decommissioned, { time: 1_000, reason: decommissioned.reason })
  })
})
