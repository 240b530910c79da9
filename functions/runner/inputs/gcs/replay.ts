/**
 * Chunks read ahead to look at an object's start (its gzip magic, its first line),
 * followed by the rest of the same iterator: the object again from its first byte,
 * without reading anything twice. A reader that stops early stops `rest` too.
 *
 * @example
 *   const head = [(await iterator.next()).value];
 *   yield* replayed(head, iterator);
 */
export async function* replayed(
  head: readonly Buffer[],
  rest: AsyncIterator<Buffer>,
): AsyncGenerator<Buffer> {
  // `rest` is usually a download: left suspended, it keeps its HTTP stream open and its
  // `retry.timeout` timer armed, and that timer holds the process that long after the run.
  // The for await closes it when the reader stops there; before that, the finally does.
  let handedOn = false;
  try {
    yield* head;
    handedOn = true;
    for await (const chunk of { [Symbol.asyncIterator]: () => rest }) yield chunk;
  } finally {
    if (!handedOn) await rest.return?.();
  }
}
