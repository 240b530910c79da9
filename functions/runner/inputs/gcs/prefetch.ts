/**
 * Reads an async iterator ahead by a fixed number of items, so producing the next item
 * (listing the next page from GCS) overlaps consuming the current one (checking its
 * fingerprints in Firestore). At most `ahead` items are requested beyond the one being
 * consumed, so memory stays bounded: with pages of 1000 objects and `ahead = 1`, no more
 * than two pages are held. Order is kept; an error of the source surfaces when its
 * item's turn comes, and stopping early returns the source.
 *
 * @example
 *   for await (const page of prefetch(listObjects(bucket, queries, policy), 1)) await check(page);
 */

export async function* prefetch<T>(source: AsyncIterable<T>, ahead = 1): AsyncGenerator<T> {
  if (ahead < 1) {
    yield* source;
    return;
  }
  const iterator = source[Symbol.asyncIterator]();
  const queue: Promise<IteratorResult<T>>[] = [];
  // Each request starts when the one before it settled: the source never has two
  // next() calls running at once (not every iterator tolerates that).
  let last: Promise<unknown> = Promise.resolve();
  const request = () => {
    const next = last.then(
      () => iterator.next(),
      () => ({ done: true, value: undefined }) as IteratorResult<T>,
    );
    // A rejection waits in the queue for its turn; don't report it as unhandled meanwhile.
    next.catch(() => {});
    last = next;
    queue.push(next);
  };
  let finished = false;
  try {
    for (let i = 0; i < ahead; i++) request();
    for (;;) {
      const result = await queue.shift()!;
      if (result.done) {
        finished = true;
        return;
      }
      request();
      yield result.value;
    }
  } finally {
    if (!finished) {
      // Let the requests already sent settle before closing the source.
      await Promise.allSettled(queue);
      await iterator.return?.();
    }
  }
}
