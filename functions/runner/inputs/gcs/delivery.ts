/**
 * Batches events of several objects into `deliver` calls and says when an object is
 * safe to fingerprint: after its reader finished and every batch holding one of its
 * events was accepted by the output. Deliveries are serialized; `add` waits while a
 * full batch is being delivered, which is the backpressure that keeps memory flat.
 *
 * @example
 *   const tracker = new DeliveryTracker(deliver, (done) => fingerprints.commit(job, done.map(key), maxAge));
 *   await tracker.add(object, events); tracker.finish(object); await tracker.close();
 */
import type { RunEvent } from '../../types.ts';

export const BATCH_EVENTS = 1000;

export interface Tracked {
  /** Batches holding its events that are not delivered yet. */
  outstanding: number;
  finished: boolean;
  /** A failed object is never reported complete (it is read again next run). */
  failed: boolean;
  /** Set when the object's events are in the open batch. */
  inBatch: boolean;
}

export class DeliveryTracker<T extends Tracked> {
  private events: RunEvent[] = [];
  private objects: T[] = [];
  private complete: T[] = [];
  private flushing: Promise<void> = Promise.resolve();
  delivered = 0;

  constructor(
    private readonly deliver: (events: RunEvent[]) => Promise<void>,
    /** Called after a delivery with the objects it completed; awaited before the next one. */
    private readonly onComplete: (objects: T[]) => Promise<void>,
    private readonly batchEvents = BATCH_EVENTS,
  ) {}

  async add(object: T, events: RunEvent[]): Promise<void> {
    if (!events.length) return;
    if (!object.inBatch) {
      object.inBatch = true;
      object.outstanding++;
      this.objects.push(object);
    }
    for (const event of events) this.events.push(event);
    if (this.events.length >= this.batchEvents) await this.flush();
  }

  finish(object: T): void {
    object.finished = true;
    if (object.outstanding === 0 && !object.failed) this.complete.push(object);
  }

  fail(object: T): void {
    object.failed = true;
  }

  /** Delivers the open batch (if any), then reports completed objects. */
  flush(): Promise<void> {
    const events = this.events;
    const objects = this.objects;
    this.events = [];
    this.objects = [];
    for (const object of objects) object.inBatch = false;
    this.flushing = this.flushing.then(async () => {
      if (events.length) {
        await this.deliver(events);
        this.delivered += events.length;
      }
      for (const object of objects) {
        object.outstanding--;
        if (object.outstanding === 0 && object.finished && !object.failed) this.complete.push(object);
      }
      const done = this.complete;
      this.complete = [];
      if (done.length) await this.onComplete(done);
    });
    return this.flushing;
  }
}
