/**
 * Waits until `check` holds, polling every 20 ms; fails with `what` after `ms`. For
 * positive conditions only: a test never waits a fixed time to assert that nothing happened.
 *
 * @example
 *   await until(() => events.length >= 5, 10_000, 'five events');
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  ms = 5_000,
  what = 'the condition',
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
