/**
 * The append-only event log (`tenants/{tenant}/events/{id}`), in the event shape of
 * CONTRACT section 5. Ids sort by time, so the log reads back in order. Each stored event
 * carries `expires_at` (EVENT_RETENTION_MS after it happened): a Firestore TTL policy
 * deletes it in the cloud (terraform/firestore.tf), `sweepExpired` (functions/scheduled/ttl-sweep.ts) where there is
 * none (the emulator). `expires_at` is storage only and never part of an API answer.
 *
 * @example
 *   await appendEvent(db, 'default', { type: 'worker-created', source: 'server', worker: 'w1', payload: {} });
 */
import { randomBytes } from 'node:crypto';
import type { Firestore, Transaction, WriteBatch } from '@google-cloud/firestore';
import { eventIdTime } from '../../shared/events/event-id.ts';
import {
  type EventSource,
  type EventType,
  kindOf,
  type SluiceEvent,
} from '../../shared/events/vocabulary.ts';
import { tenantCollection } from '../adapters/firestore-paths.ts';

export { eventIdTime };

export interface NewEvent {
  type: EventType;
  source: EventSource;
  worker?: string;
  job?: string;
  tags?: string[];
  payload: Record<string, unknown>;
}

export function buildEvent(event: NewEvent, now = new Date()): SluiceEvent {
  return { id: nextEventId(now), kind: kindOf(event.type), time: now.toISOString(), ...event };
}

let lastIdMs = 0;
let sameMsSequence = 0;

/**
 * Time-ordered ids, so ordering by id is ordering by time: the time to the millisecond,
 * then a sequence that keeps the events one process makes within a millisecond (say a
 * first heartbeat and the state change it carries) in the order they were made, then
 * randomness for uniqueness across processes. The time never runs backwards within a
 * process, even when the clock does.
 */
function nextEventId(now: Date): string {
  let ms = now.getTime();
  if (ms <= lastIdMs) {
    ms = lastIdMs;
    sameMsSequence++;
  } else {
    lastIdMs = ms;
    sameMsSequence = 0;
  }
  return `${eventIdTime(new Date(ms))}-${sameMsSequence.toString(36).padStart(4, '0')}${randomBytes(4).toString('hex')}`;
}

export function eventsCollection(db: Firestore, tenant: string) {
  return tenantCollection(db, tenant, 'events');
}

/** How long the log keeps an event. */
export const EVENT_RETENTION_MS = 30 * 24 * 3600_000;

/** The event as stored: with the expiry the TTL policy acts on (a Date is stored as a Timestamp). */
export function storedEvent(event: SluiceEvent): SluiceEvent & { expires_at: Date } {
  return { ...event, expires_at: new Date(Date.parse(event.time) + EVENT_RETENTION_MS) };
}

export async function appendEvent(db: Firestore, tenant: string, event: NewEvent): Promise<SluiceEvent> {
  const full = buildEvent(event);
  await eventsCollection(db, tenant).doc(full.id).set(storedEvent(full));
  return full;
}

/** Appends inside a transaction or batch, so the event exists exactly when the change it records does. */
export function appendEventIn(
  /** A transaction or a write batch: anything that sets documents together. */
  tx: Transaction | WriteBatch,
  db: Firestore,
  tenant: string,
  event: NewEvent,
): SluiceEvent {
  const full = buildEvent(event);
  // Both take a document and its data; TypeScript cannot call a union of overloads.
  (tx as WriteBatch).set(eventsCollection(db, tenant).doc(full.id), storedEvent(full));
  return full;
}
