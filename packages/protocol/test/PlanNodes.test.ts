import { assert, describe, it } from "@effect/vitest"
import { TaskPlan } from "@kindling/protocol"
import * as PlanNodes from "@kindling/protocol/PlanNodes"
import { Arbitrary, FastCheck as fc, Schema } from "effect"

const shuffle = (shuffleId: number) => ({ shuffleId, token: `token-${shuffleId}` })
const read = (shuffleId: number, reduceId: number): TaskPlan.PlanNodeEncoded => ({
  _tag: "ShuffleRead",
  shuffle: shuffle(shuffleId),
  reduceId,
  read: { _tag: "Records" }
})
const cached = (rddId: number, partition: number, child: TaskPlan.PlanNodeEncoded): TaskPlan.PlanNodeEncoded => ({
  _tag: "Cached",
  rddId,
  partition,
  level: "MEMORY_ONLY",
  child
})

describe("PlanNodes", () => {
  it("a task's needs: the shuffle it writes, the persisted partitions it reads, each shuffle read with the persisted partitions above it", () => {
    // Partition 3 of dataset 9 (persisted) co-groups shuffle 1 with partition 3 of dataset 5 (persisted), which
    // reads shuffle 2; beside them, shuffle 4 read with nothing persisted above it.
    const plan: TaskPlan.PlanNodeEncoded = {
      _tag: "Concat",
      children: [
        cached(9, 3, {
          _tag: "CoGroup",
          reduceId: 3,
          inputs: [{ _tag: "Shuffled", shuffle: shuffle(1) }, { _tag: "InPlace", plan: cached(5, 3, read(2, 3)) }]
        }),
        read(4, 0)
      ]
    }
    const result = {
      _tag: "ShuffleWrite",
      shuffle: shuffle(7),
      mapIndex: 0,
      numReduces: 2,
      partitioner: { _tag: "Hash" }
    } as const
    const broadcasts = [{ id: 1, token: "b" }]
    const nine = { rddId: 9, partition: 3 }
    const five = { rddId: 5, partition: 3 }
    assert.deepStrictEqual(PlanNodes.needsOf(plan, result, broadcasts), {
      writes: shuffle(7),
      persisted: [nine, five],
      shuffleReads: [
        { shuffle: shuffle(1), reduceId: 3, beneath: [nine] },
        { shuffle: shuffle(2), reduceId: 3, beneath: [nine, five] },
        { shuffle: shuffle(4), reduceId: 0, beneath: [] }
      ],
      broadcasts
    })
    // A result task writes no shuffle.
    assert.notProperty(PlanNodes.needsOf(read(4, 0), { _tag: "Count" }, []), "writes")
  })

  it("every task's needs travel (their schema takes them as they are), listing each persisted partition and shuffle read of its plan", () => {
    fc.assert(
      fc.property(Arbitrary.make(TaskPlan.Task), (task) => {
        const { plan, result } = Schema.encodeSync(TaskPlan.Task)(task)
        const needs = PlanNodes.needsOf(plan, result, [])
        assert.deepStrictEqual(Schema.decodeUnknownSync(TaskPlan.TaskNeeds)(needs), needs)
        const nodes = [...PlanNodes.nodes(plan)]
        assert.deepStrictEqual(
          needs.persisted,
          nodes.flatMap((node) => node._tag === "Cached" ? [{ rddId: node.rddId, partition: node.partition }] : [])
        )
        const reads = nodes.flatMap((node) =>
          node._tag === "ShuffleRead"
            ? [node.shuffle]
            : node._tag === "CoGroup"
            ? node.inputs.flatMap((input) => input._tag === "Shuffled" ? [input.shuffle] : [])
            : []
        )
        assert.sameDeepMembers(needs.shuffleReads.map((r) => r.shuffle), reads)
      }),
      { numRuns: 200 }
    )
  })
})
