/**
 * Seeded randomness for tests, so that a failure can be replayed: a test draws its seed
 * with `testSeed()` (from `SLUICE_TEST_SEED` when set, else fresh), puts it in its failure
 * messages, and draws every random number from `seededRandom(seed)`.
 *
 * @example
 *   const seed = testSeed();
 *   const random = seededRandom(seed);
 *   expect(x, `seed ${seed} (rerun with SLUICE_TEST_SEED=${seed})`).toBe(y);
 */

export function testSeed(): number {
  const given = process.env.SLUICE_TEST_SEED;
  return given ? Number(given) : Math.floor(Math.random() * 2 ** 31);
}

/** mulberry32: small, fast, and good enough to spread test inputs. Returns numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
