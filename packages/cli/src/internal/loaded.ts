// A module loaded when it is first needed, not with the command: what a command line does not use costs it no
// start-up (`kindling status` loads neither the driver's runtime nor the app bundler, `submit` not the master).
import * as Effect from "effect/Effect"

export const loaded = <M, A, E, R>(
  load: () => Promise<M>,
  run: (module: M) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => Effect.flatMap(Effect.promise(load), run)
