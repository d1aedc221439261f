// A poll for tests that wait on a state they can only ask about, in a module of its own so
// that a test of processes (cli-serve.test.ts) can use it without loading src/ into its fork.

/** Waits for `predicate` to hold, checking every `everyMs`, for at most `withinMs`. */
export const eventually = async <A>(
  check: () => Promise<A>,
  predicate: (value: A) => boolean,
  withinMs = 10_000,
  everyMs = 50
): Promise<A> => {
  const deadline = performance.now() + withinMs
  for (;;) {
    const value = await check()
    if (predicate(value) || performance.now() > deadline) return value
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
