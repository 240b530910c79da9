/**
 * Chunks read ahead to look at an object's start (its gzip magic, its first line),
 * followed by the rest of the same iterator: the object again from its first byte,
 * without reading anything twice.
 *
 * @example
 *   const head = [(await iterator.next()).value];
 *   yield* replayed(head, iterator);
 */
export async function* replayed(
  head: readonly Buffer[],
  rest: AsyncIterator<Buffer>,
): AsyncGenerator<Buffer> {
  yield* head;
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}
