/**
 * `npm run bench:startup`: how long the local stack takes from `npm start` to
 * `sluice ready`, a fresh data directory (first start: certificate, admin bootstrap)
 * and then restarts over the same data; and the cold import time of each Cloud
 * Function entry module (bench/coldstart.ts does the per-entry detail).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../local/processes.ts';

const RESTARTS = 3;

async function timeToReady(dataDir: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const env: NodeJS.ProcessEnv = { ...process.env, SLUICE_PORT: String(port), SLUICE_LOG_LEVEL: 'warn' };
  delete env.FIRESTORE_EMULATOR_HOST;
  delete env.PUBSUB_EMULATOR_HOST;
  delete env.STORAGE_EMULATOR_HOST;
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts', '--data-dir', dataDir], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const elapsed = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (/sluice ready: https:\/\/127\.0\.0\.1:\d+/.test(out)) resolve(performance.now() - started);
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${out}`)));
  });
  const stopped = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await stopped;
  return elapsed;
}

const dataDir = mkdtempSync(join(tmpdir(), 'sluice-bench-startup-'));
try {
  const first = await timeToReady(dataDir);
  const restarts: number[] = [];
  for (let i = 0; i < RESTARTS; i++) restarts.push(await timeToReady(dataDir));
  restarts.sort((a, b) => a - b);
  console.log('local stack: time from start to "sluice ready"');
  console.log(`  first start (fresh .sluice/): ${Math.round(first)} ms`);
  console.log(`  restart, median of ${RESTARTS}:     ${Math.round(restarts[Math.floor(RESTARTS / 2)]!)} ms`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}

try {
  const { measureColdStarts } = await import('./coldstart.ts');
  await measureColdStarts();
} catch (err) {
  console.log(`function entry cold starts: not measured (${(err as Error).message})`);
}
