/**
 * Fingerprints and high-watermarks in a directory (`sluice job run --state-dir`), one
 * JSON file per job and kind, written atomically (temp file + rename).
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FingerprintStore, WatermarkStore } from '../types.ts';

export function fileStores(dir: string): { fingerprints: FingerprintStore; watermarks: WatermarkStore } {
  const read = async (file: string): Promise<Record<string, string | number>> => {
    try {
      return JSON.parse(await readFile(join(dir, file), 'utf8'));
    } catch {
      return {};
    }
  };
  const write = async (file: string, data: Record<string, string | number>) => {
    await mkdir(dir, { recursive: true });
    const path = join(dir, file);
    await writeFile(`${path}.tmp`, JSON.stringify(data));
    await rename(`${path}.tmp`, path);
  };
  const safe = (job: string) => job.replace(/[^A-Za-z0-9._-]/g, '_');
  return {
    fingerprints: {
      async seen(job, keys) {
        const stored = await read(`${safe(job)}.fingerprints.json`);
        const now = Date.now();
        return new Set(keys.filter((k) => typeof stored[k] === 'number' && (stored[k] as number) > now));
      },
      async commit(job, keys, maxAgeMs) {
        const file = `${safe(job)}.fingerprints.json`;
        const stored = await read(file);
        const now = Date.now();
        for (const [k, expires] of Object.entries(stored)) if ((expires as number) <= now) delete stored[k];
        for (const key of keys) stored[key] = now + maxAgeMs;
        await write(file, stored);
      },
    },
    watermarks: {
      async get(job, name) {
        return (await read(`${safe(job)}.watermarks.json`))[name] as string | undefined;
      },
      async set(job, name, value) {
        const file = `${safe(job)}.watermarks.json`;
        await write(file, { ...(await read(file)), [name]: value });
      },
    },
  };
}
