/**
 * The payload of an event a client writes (`POST /api/messages`, a worker's
 * `POST /api/worker/events`): a JSON object stored as the `payload` map of the event's
 * Firestore document. Firestore refuses some JSON: maps and arrays nested more than 20
 * levels inside a document, an array directly inside an array, an empty key, a key of the
 * reserved form `__name__`, a field path over 1,500 bytes, a document over 1 MiB. Each was a
 * 500. The schema refuses the shapes with a 400 first and states them in the OpenAPI
 * document; `unstorable` turns Firestore's own refusal of the rest (the size) into a 400.
 *
 * @example
 *   EventPayload.safeParse({ a: { b: [1, { c: 2 }] } }).success; // true
 *   EventPayload.safeParse({ rows: [[1, 2]] }).success; // false: an array in an array
 */
import { z } from '@hono/zod-openapi';
import { ApiError } from '../../shared/errors.ts';

/**
 * Levels of maps and arrays a payload may nest, the payload itself being the first. The
 * payload is a field of its event document, and Firestore allows 20 levels below a
 * document's top (its client refuses a field path of more than 21 segments).
 */
export const MAX_PAYLOAD_DEPTH = 20;
/** Firestore's limit on a field path: `payload.` and the keys below it, quoted where needed. */
const MAX_FIELD_PATH_BYTES = 1_500;
const RESERVED_KEY = /^__.*__$/;

type Path = (string | number)[];

/** What is wrong with a payload for Firestore, with the path of the offending value; undefined when fine. */
export function payloadProblem(payload: unknown): { path: Path; message: string } | undefined {
  // Iterative: the edge bounds a body's depth (functions/app/middleware/body-rules.ts), but a
  // payload built in code is not bounded by it.
  const stack: { value: unknown; path: Path; inArray: boolean; pathBytes: number }[] = [
    { value: payload, path: [], inArray: false, pathBytes: 'payload'.length },
  ];
  while (stack.length) {
    const { value, path, inArray, pathBytes } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    const isArray = Array.isArray(value);
    if (isArray && inArray)
      return {
        path,
        message:
          'an array may not hold an array directly (Firestore refuses it); wrap the inner one in an object',
      };
    if (path.length + 1 > MAX_PAYLOAD_DEPTH)
      return { path, message: `objects and arrays may nest at most ${MAX_PAYLOAD_DEPTH} levels deep` };
    const entries: [string | number, unknown][] = isArray ? [...value.entries()] : Object.entries(value);
    for (const [key, item] of entries) {
      const at = [...path, key];
      if (key === '') return { path: at, message: 'keys may not be empty' };
      if (typeof key === 'string' && RESERVED_KEY.test(key))
        return { path: at, message: 'keys of the form __name__ are reserved by Firestore' };
      const bytes = pathBytes + segmentBytes(key);
      if (bytes > MAX_FIELD_PATH_BYTES)
        return {
          path: at,
          message: `the keys leading to a value may take at most about ${MAX_FIELD_PATH_BYTES} bytes`,
        };
      stack.push({ value: item, path: at, inArray: isArray, pathBytes: bytes });
    }
  }
  return undefined;
}

/** A key's bytes in a field path, counted high: a dot, backquotes, and escapes for ` and \. */
function segmentBytes(key: string | number): number {
  const text = String(key);
  return 3 + Buffer.byteLength(text) + (text.match(/[`\\]/g)?.length ?? 0);
}

export const EventPayload = z
  .record(z.string(), z.unknown())
  .superRefine((payload, ctx) => {
    const problem = payloadProblem(payload);
    if (problem) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  })
  .openapi({
    description:
      `A JSON object, stored as it is in Firestore: objects and arrays nest at most ${MAX_PAYLOAD_DEPTH} levels deep ` +
      '(the payload itself is the first), no array directly holds an array, no key is empty or of the form ' +
      `__name__, the keys leading to any value take at most about ${MAX_FIELD_PATH_BYTES} bytes, and the event ` +
      'stays within a Firestore document (1 MiB, counting 8 bytes for every number)',
  });

/**
 * Firestore's refusal of an event's data (INVALID_ARGUMENT from the server, such as a
 * document over its size limit, or its client's check of a value) as the 400 it is; any
 * other error as it was.
 */
export function unstorable(err: unknown, what: string): unknown {
  const code = (err as { code?: unknown })?.code;
  const message = (err as Error)?.message ?? '';
  if (code !== 3 && !message.startsWith('Value for argument "data" is not a valid Firestore document'))
    return err;
  const reason = `Firestore cannot store ${what} (too large, or a shape it refuses)`;
  return ApiError.invalid(`invalid request body: ${reason}`, [{ path: 'payload', message: reason }]);
}
