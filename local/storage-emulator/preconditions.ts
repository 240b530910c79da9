/**
 * Request preconditions (`ifGenerationMatch`, `ifGenerationNotMatch`, `ifMetagenerationMatch`,
 * `ifMetagenerationNotMatch`, and the `ifSource...` ones of copy and rewrite), as GCS
 * documents them (cloud.google.com/storage/docs/request-preconditions): a failed `...Match`
 * is 412; a failed `...NotMatch` is 304 Not Modified on a read and 412 on a write; a value
 * that is not an integer is 400. The checks of a write run inside the store's lock (see
 * ObjectStore.putObject), so that of concurrent `ifGenerationMatch=0` writers one wins.
 */
import { HttpError } from './http-error.ts';
import type { ObjectMeta } from './store.ts';

export interface Preconditions {
  generationMatch?: number;
  generationNotMatch?: number;
  metagenerationMatch?: number;
  metagenerationNotMatch?: number;
}

const NAMES = {
  generationMatch: 'GenerationMatch',
  generationNotMatch: 'GenerationNotMatch',
  metagenerationMatch: 'MetagenerationMatch',
  metagenerationNotMatch: 'MetagenerationNotMatch',
} as const;

/** The preconditions of a request: `if...` (the target), or with `source` the `ifSource...` ones. */
export function preconditionsOf(q: URLSearchParams, source = false): Preconditions {
  const out: Preconditions = {};
  for (const [key, suffix] of Object.entries(NAMES) as [keyof Preconditions, string][]) {
    const param = `if${source ? 'Source' : ''}${suffix}`;
    const value = q.get(param);
    if (value === null) continue;
    if (!/^-?\d+$/.test(value)) throw new HttpError(400, `Invalid argument for ${param}: '${value}'.`);
    out[key] = Number(value);
  }
  return out;
}

const FAILED = 'At least one of the pre-conditions you specified did not hold.';

/**
 * Throws unless `object` (undefined: there is none) meets the preconditions. GCS documents that
 * a `NotMatch` fails when there is no live object, and that a generation of 0 means "none".
 */
export function checkPreconditions(
  p: Preconditions,
  object: ObjectMeta | undefined,
  mode: 'read' | 'write',
): void {
  const generation = object?.generation ?? 0;
  if (p.generationMatch !== undefined && generation !== p.generationMatch)
    throw new HttpError(412, FAILED, 'conditionNotMet');
  if (p.metagenerationMatch !== undefined && (!object || object.metageneration !== p.metagenerationMatch))
    throw new HttpError(412, FAILED, 'conditionNotMet');
  const notModified =
    (p.generationNotMatch !== undefined && (!object || generation === p.generationNotMatch)) ||
    (p.metagenerationNotMatch !== undefined &&
      (!object || object.metageneration === p.metagenerationNotMatch));
  if (notModified) {
    if (mode === 'read' && object) throw new HttpError(304, 'Not Modified', 'notModified');
    throw new HttpError(412, FAILED, 'conditionNotMet');
  }
}
