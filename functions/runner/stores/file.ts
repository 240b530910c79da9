/**
 * Fingerprints and high-watermarks in a directory (`sluice job run --state-dir`), one
 * JSON file per job and kind, written atomically (temp file + rename).
 *
 * The process that runs with a state dir owns it: each file is read once, kept in memory,
 * and written whole after each change (writes of one file take turns, so two never share
 * its temp file). A `seen` costs no I/O; a `commit` one write, however many keys it holds.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FingerprintStore, WatermarkStore } from '../types.ts';

type Stored = Record<string, string | number>;

export function fileStores(dir: string): { fingerprints: FingerprintStore; watermarks: WatermarkStore } {
  const files = new Map<string, Promise<Stored>>();
  const writes = new Map<string, Promise<void>>();
  const load = (file: string): Promise<Stored> => {
    let loaded = files.get(file);
    if (!loaded) {
      loaded = readFile(join(dir, file), 'utf8').then(
        (text) => JSON.parse(text) as Stored,
        () => ({}),
      );
      files.set(file, loaded);
    }
    return loaded;
  };
  const save = (file: string, data: Stored): Promise<void> => {
    const write = (writes.get(file) ?? Promise.resolve()).then(async () => {
      await mkdir(dir, { recursive: true });
      const path = join(dir, file);
      await writeFile(`${path}.tmp`, JSON.stringify(data));
      await rename(`${path}.tmp`, path);
    });
    writes.set(
      file,
      write.catch(() => {}),
    );
    return write;
  };
  const safe = (job: string) => job.replace(/[^A-Za-z0-9._-]/g, '_');
  return {
    fingerprints: {
      async seen(job, keys) {
        const stored = await load(`${safe(job)}.fingerprints.json`);
        const now = Date.now();
        return new Set(keys.filter((k) => typeof stored[k] === 'number' && (stored[k] as number) > now));
      },
      async commit(job, keys, maxAgeMs) {
        const file = `${safe(job)}.fingerprints.json`;
        const stored = await load(file);
        const now = Date.now();
        for (const [k, expires] of Object.entries(stored)) if ((expires as number) <= now) delete stored[k];
        for (const key of keys) stored[key] = now + maxAgeMs;
        await save(file, stored);
      },
    },
    watermarks: {
      async get(job, name) {
        return (await load(`${safe(job)}.watermarks.json`))[name] as string | undefined;
      },
      async set(job, name, value) {
        const file = `${safe(job)}.watermarks.json`;
        const stored = await load(file);
        stored[name] = value;
        await save(file, stored);
      },
    },
  };
}
