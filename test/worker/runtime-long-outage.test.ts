/**
 * A worker whose control plane is away for long retries with back-off for as long as it takes.
 * Each wait left a listener on the runtime's stop signal, so after ten of them (about four
 * minutes away) Node printed `MaxListenersExceededWarning: Possible EventTarget memory leak
 * detected` on the worker's console, and the listeners piled up for as long as the outage
 * lasted. Fake timers run an hour of outage in a moment.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { fileStores } from '../../functions/runner/stores/file.ts';
import { runWorker } from '../../functions/runner/worker-runtime.ts';

afterEach(() => {
  vi.useRealTimers();
});

it('waits out an hour-long outage without piling up listeners', async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  const controller = new AbortController();
  const log: string[] = [];
  const unreachable = () => Promise.reject(new Error('fetch failed (connect ECONNREFUSED)'));
  const done = runWorker({
    api: async () => ({ get: unreachable, post: unreachable }),
    worker: 'away',
    output: { write: async () => {}, close: async () => {} },
    stores: fileStores(mkdtempSync(join(tmpdir(), 'sluice-outage-'))),
    signal: controller.signal,
    log: (line) => log.push(line),
    heartbeatMs: 10_000,
  });
  try {
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    const retries = log.filter((line) => line.startsWith('control plane unreachable or failing')).length;
    expect(retries).toBeGreaterThan(100);
    expect(warnings).toEqual([]);
  } finally {
    process.off('warning', onWarning);
    controller.abort();
    await vi.runAllTimersAsync();
    await done.catch(() => {});
  }
});
