// The functions the random programs' jobs ship, and their oracle calls as well: self-contained, since they travel
// to executors as source text.

export const fn = {
  affine: (x: number, env: { a: number; b: number }) => x * env.a + env.b,
  notResidue: (x: number, env: { m: number; r: number }) => ((x % env.m) + env.m) % env.m !== env.r,
  evensTwice: (x: number, env: { d: number }) => (x % 2 === 0 ? [x, x + env.d] : []),
  keyOf: (x: number, env: { k: number }) => ((x % env.k) + env.k) % env.k,
  toPair: (x: number, env: { k: number; a: number }) => [((x % env.k) + env.k) % env.k, x * env.a],
  plusIndex: (partition: number, records: Iterable<number>, env: { k: number }) =>
    Array.from(records, (x) => x + partition * env.k),
  lookedUp: (x: number, env: { table: { readonly value: ReadonlyArray<number> } }) =>
    x + env.table.value[((x % env.table.value.length) + env.table.value.length) % env.table.value.length]!,
  faulty: (x: unknown, env: { bad: string; always: boolean; task: { readonly attemptNumber: number } }) => {
    if (JSON.stringify(x) === env.bad && (env.always || env.task.attemptNumber === 0)) {
      throw new Error(`injected fault: record ${env.bad}`)
    }
    return x
  },
  canonical: (records: ReadonlyArray<unknown>) =>
    [...records].sort((a, b) => {
      const x = JSON.stringify(a)
      const y = JSON.stringify(b)
      return x < y ? -1 : x > y ? 1 : 0
    }),
  ascending: (values: Array<any>) => [...values].sort((a, b) => a - b),
  bothSorted: ([left, right]: [Array<any>, Array<any>]) => [
    [...left].sort((a, b) => a - b),
    [...right].sort((a, b) => a - b)
  ],
  digest: (value: unknown) => {
    const text = JSON.stringify(value) ?? "undefined"
    let hash = 0
    for (let i = 0; i < text.length; i++) hash = (hash * 31 + text.charCodeAt(i)) | 0
    return hash % 1000
  },
  shift: (v: number, env: { d: number }) => v + env.d,
  mirrored: (v: number) => [v, -v],
  plus: (a: number, b: number) => a + b,
  sumCount: ([s, c]: [number, number], v: number): [number, number] => [s + v, c + 1],
  mergeSumCount: ([s1, c1]: [number, number], [s2, c2]: [number, number]): [number, number] => [s1 + s2, c1 + c2],
  single: (v: number) => [v],
  appended: (list: Array<number>, v: number) => [...list, v],
  concatenated: (a: Array<number>, b: Array<number>) => [...a, ...b],
  pairSum: ([k, v]: [number, number]) => k * 1000 + v,
  identity: (x: number) => x
}
