/** JSON resources and errors in the shapes the GCS JSON API returns them. */
import type { BucketMeta, ObjectMeta } from './store.ts';

export function bucketResource(base: string, bucket: BucketMeta): Record<string, unknown> {
  return {
    kind: 'storage#bucket',
    id: bucket.name,
    selfLink: `${base}/storage/v1/b/${bucket.name}`,
    name: bucket.name,
    projectNumber: bucket.projectNumber ?? '0',
    metageneration: String(bucket.metageneration),
    location: 'US',
    storageClass: 'STANDARD',
    etag: 'CAE=',
    timeCreated: bucket.timeCreated,
    updated: bucket.updated,
  };
}

export function objectResource(base: string, object: ObjectMeta): Record<string, unknown> {
  const encoded = encodeURIComponent(object.name);
  return {
    kind: 'storage#object',
    id: `${object.bucket}/${object.name}/${object.generation}`,
    selfLink: `${base}/storage/v1/b/${object.bucket}/o/${encoded}`,
    mediaLink: `${base}/download/storage/v1/b/${object.bucket}/o/${encoded}?generation=${object.generation}&alt=media`,
    name: object.name,
    bucket: object.bucket,
    generation: String(object.generation),
    metageneration: String(object.metageneration),
    contentType: object.contentType,
    ...(object.contentEncoding ? { contentEncoding: object.contentEncoding } : {}),
    ...(object.cacheControl ? { cacheControl: object.cacheControl } : {}),
    ...(object.contentDisposition ? { contentDisposition: object.contentDisposition } : {}),
    ...(object.contentLanguage ? { contentLanguage: object.contentLanguage } : {}),
    ...(object.customTime ? { customTime: object.customTime } : {}),
    storageClass: 'STANDARD',
    size: String(object.size),
    ...(object.md5Hash ? { md5Hash: object.md5Hash } : {}),
    crc32c: object.crc32c,
    ...(object.componentCount ? { componentCount: object.componentCount } : {}),
    etag: etagOf(object),
    timeCreated: object.timeCreated,
    updated: object.updated,
    timeStorageClassUpdated: object.timeCreated,
    ...(object.metadata ? { metadata: object.metadata } : {}),
  };
}

export function etagOf(object: ObjectMeta): string {
  return Buffer.from(`${object.generation}/${object.metageneration}`).toString('base64');
}

const REASONS: Record<number, string> = {
  400: 'invalid',
  404: 'notFound',
  409: 'conflict',
  412: 'conditionNotMet',
  413: 'uploadTooLarge',
  416: 'requestedRangeNotSatisfiable',
  429: 'rateLimitExceeded',
  500: 'backendError',
  503: 'backendError',
};

export function errorBody(code: number, message: string, reason?: string): Record<string, unknown> {
  return {
    error: {
      code,
      message,
      errors: [{ message, domain: 'global', reason: reason ?? REASONS[code] ?? 'invalid' }],
    },
  };
}
