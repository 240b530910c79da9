/**
 * The limits a part request keeps (a run request of reason `part`, shared/runs/run-request.ts):
 * whoever builds parts (the gcs input's Sharder) cuts the objects it hands over by both.
 * PART_MAX_OBJECTS is also the largest SLUICE_SHARD_OBJECTS (functions/app/config.ts) and
 * terraform's `shard_objects` may be; the request schema refuses a part of more.
 * PART_MAX_BYTES bounds the request's JSON (UTF-8 bytes, the message data as published):
 * Pub/Sub refuses a message over 10 MB, a push carries the data in base64 (4/3 of it) inside
 * its JSON body, and object names alone may take 1,024 bytes each (more once escaped), so a
 * part of many long-named objects would not fit without it. No zod here: the configuration
 * of every function reads this.
 */
export const PART_MAX_OBJECTS = 5_000;
export const PART_MAX_BYTES = 4 * 1024 * 1024;
