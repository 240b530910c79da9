/**
 * Objects' events in the order the objects were listed, each object's contiguously, while
 * several are read at once (`ordered`). Each object takes a turn when its read starts (in
 * listing order); until the objects before it are done, its batches wait in its turn. All
 * turns together hold at most `capEvents` events: past that, a read that is not the head's
 * waits too, so memory stays bounded however many small objects finish ahead.
 *
 * @example
 *   const turn = inOrder.enter();            // synchronously, as the object's read starts
 *   for (const b of batches) await turn.add(b, size(b), deliver);
 *   void turn.flush(deliver).finally(() => turn.done()); // the read's slot is free meanwhile
 */
export class InOrder {
  #previous: Promise<void> = Promise.resolve();
  /** Events kept by every turn, waiting. */
  held = 0;

  constructor(readonly capEvents: number) {}

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
  async add(batch: B, events: number, deliver: (batch: B) => Promise<void>): Promise<void> {
    if (!this.#ready) {
      this.#pending.push(batch);
      this.#events += events;
      this.order.held += events;
      if (this.order.held < this.order.capEvents) return;
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
    this.order.held -= this.#events;
    this.#events = 0;
    for (const batch of pending) await deliver(batch);
  }

  /** The object is done (read, failed or stopped): the next one's turn. */
  done(): void {
    this.release();
  }
}
