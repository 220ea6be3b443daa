// Draws apart from the run's `random`, each stream from the seed and a salt of its own: a choice added to the plan
// (which apps allocate dynamically, which workers are decommissioned) leaves the rest of a seed's run as it was.
export const sideDraws = (seed: number, salt: number): () => number => {
  let state = (Math.imul(seed, 2654435761) ^ Math.imul(salt + 1, 2246822519)) >>> 0
  return () => {
    state = (Math.imul(state ^ (state >>> 15), 2246822519) + 3266489917) >>> 0
    return state / 2 ** 32
  }
}
