/**
 * Batches events of several objects into `deliver` calls and says when an object is
 * safe to fingerprint: after its reader finished and every batch holding one of its
 * events was accepted by the output. Deliveries are serialized; `add` waits while a
 * full batch is being delivered, which is the backpressure that keeps memory flat.
 *
 * Batches are of either form of batches.ts; the tracker only counts and joins them.
 *
 * @example
 *   const tracker = new DeliveryTracker(eventObjects, deliver, (done) => fingerprints.commit(job, done.map(key), maxAge));
 *   await tracker.add(object, events); tracker.finish(object); await tracker.flush();
 */
import type { BatchFormat } from './batches.ts';

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

export class DeliveryTracker<T extends Tracked, B> {
  private batches: B[] = [];
  private size = 0;
  private objects: T[] = [];
  private complete: T[] = [];
  private flushing: Promise<void> = Promise.resolve();
  delivered = 0;

  constructor(
    private readonly format: Pick<BatchFormat<B>, 'size' | 'join'>,
    /** Delivers a batch; `objects` are those with events in it (one in per-object mode). */
    private readonly deliver: (batch: B, objects: T[]) => Promise<void>,
    /** Called after a delivery with the objects it completed; awaited before the next one. */
    private readonly onComplete: (objects: T[]) => Promise<void>,
    private readonly batchEvents = BATCH_EVENTS,
    /** Never join two objects' events in one batch (the output names what it writes after the object). */
    private readonly perObject = false,
  ) {}

  async add(object: T, batch: B): Promise<void> {
    const size = this.format.size(batch);
    if (!size) return;
    // The open batch is handed to the delivery chain synchronously, so no other reader's
    // events can slip in between; waiting for it afterwards keeps the backpressure.
    const previous =
      this.perObject && this.objects.length && this.objects[0] !== object ? this.flush() : undefined;
    if (!object.inBatch) {
      object.inBatch = true;
      object.outstanding++;
      this.objects.push(object);
    }
    this.batches.push(batch);
    this.size += size;
    if (previous) await previous;
    if (this.size >= this.batchEvents) await this.flush();
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
    const batches = this.batches;
    const size = this.size;
    const objects = this.objects;
    this.batches = [];
    this.size = 0;
    this.objects = [];
    for (const object of objects) object.inBatch = false;
    this.flushing = this.flushing.then(async () => {
      if (size) {
        await this.deliver(this.format.join(batches), objects);
        this.delivered += size;
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
