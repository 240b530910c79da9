/**
 * Objects' events in the order the objects were listed, each object's contiguously, while
 * several are read at once (`ordered`). Each object takes a turn when its read starts (in
 * listing order); until the objects before it are done, its batches wait in its turn. All
 * turns together hold at most `cap.events` events and `cap.bytes` bytes (of the batches
 * whose size in bytes is known: JSON lines): past either, a read that is not the head's
 * waits too, so memory stays bounded however many objects finish ahead, and however wide
 * their lines.
 *
 * @example
 *   const turn = inOrder.enter();            // synchronously, as the object's read starts
 *   for (const b of batches) await turn.add(b, { events: size(b), bytes: bytes(b) }, deliver);
 *   void turn.flush(deliver).finally(() => turn.done()); // the read's slot is free meanwhile
 */
export class InOrder {
  #previous: Promise<void> = Promise.resolve();
  /** Events and bytes kept by every turn, waiting. */
  held = { events: 0, bytes: 0 };

  constructor(readonly cap: { events: number; bytes: number }) {}

  full(): boolean {
    return this.held.events >= this.cap.events || this.held.bytes >= this.cap.bytes;
  }

  /** The next turn, after every turn entered before it. */
  enter<B>(): Turn<B> {
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const turn = new Turn<B>(this.#previous, release, this);
    this.#previous = mine;
    return turn;
  }
}

export class Turn<B> {
  #ready = false;
  #pending: B[] = [];
  #events = 0;
  #bytes = 0;

  constructor(
    private readonly previous: Promise<void>,
    private readonly release: () => void,
    private readonly order: InOrder,
  ) {
    void previous.then(() => {
      this.#ready = true;
    });
  }

  /** Delivers `batch` now if it is this object's turn, else keeps it (waiting once the cap is reached). */
  async add(
    batch: B,
    size: { events: number; bytes: number },
    deliver: (batch: B) => Promise<void>,
  ): Promise<void> {
    if (!this.#ready) {
      this.#pending.push(batch);
      this.#events += size.events;
      this.#bytes += size.bytes;
      this.order.held.events += size.events;
      this.order.held.bytes += size.bytes;
      if (!this.order.full()) return;
      await this.flush(deliver);
      return;
    }
    await this.flush(deliver);
    await deliver(batch);
  }

  /** Waits for this object's turn and delivers what was kept. */
  async flush(deliver: (batch: B) => Promise<void>): Promise<void> {
    await this.previous;
    const pending = this.#pending;
    this.#pending = [];
    this.order.held.events -= this.#events;
    this.order.held.bytes -= this.#bytes;
    this.#events = 0;
    this.#bytes = 0;
    for (const batch of pending) await deliver(batch);
  }

  /** The object is done (read, failed or stopped): the next one's turn. */
  done(): void {
    this.release();
  }
}
