/**
 * `npm run bench:startup`: how long `sluice --help` takes to start the way the README
 * puts it on the PATH (`bin/` on PATH), next to `npx sluice`; how long the local stack
 * takes from `npm start` to `sluice ready`, a fresh data directory (first start:
 * certificate, admin bootstrap) and then restarts over the same data; and the cold import
 * time of each Cloud Function entry module (bench/coldstart.ts does the per-entry detail).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../local/processes.ts';

const RESTARTS = 3;
const CLI_RUNS = 7;

/** Median wall time of a whole command, started from a shell as a user types it. */
function medianCommandMs(command: string, env: NodeJS.ProcessEnv, cwd = tmpdir()): number {
  const runs: number[] = [];
  for (let i = 0; i < CLI_RUNS; i++) {
    const started = performance.now();
    execFileSync('sh', ['-c', `${command} > /dev/null`], { env, cwd });
    runs.push(performance.now() - started);
  }
  return runs.sort((a, b) => a - b)[Math.floor(CLI_RUNS / 2)]!;
}

// The first run builds the CLI bundle when a source changed: not what a user meets each time.
const onPath = { ...process.env, PATH: `${join(process.cwd(), 'bin')}:${process.env.PATH}` };
execFileSync('sh', ['-c', 'sluice --help > /dev/null'], { env: onPath });
console.log(`sluice --help, median of ${CLI_RUNS} (whole process):`);
console.log(
  `  sluice on PATH (README: export PATH="$PWD/bin:$PATH"): ${Math.round(medianCommandMs('sluice --help', onPath))} ms`,
);
console.log(
  `  npx sluice (npm starts first):                          ${Math.round(medianCommandMs('npx sluice --help', process.env, process.cwd()))} ms\n`,
);

async function timeToReady(dataDir: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SLUICE_PORT: String(port),
    SLUICE_WAKE_PORT: '0',
    SLUICE_LOG_LEVEL: 'warn',
  };
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

console.log(
  '\ncold import of each function module in a fresh Node process (median of 5, tsx loader cost subtracted):',
);
const baseline = await medianImportMs('node:path');
const modules = ['functions/families.ts', ...routeModules()];
for (const module of modules) {
  console.log(`  ${module.padEnd(40)} ${Math.round((await medianImportMs(`./${module}`)) - baseline)} ms`);
}
const sdks = await medianImportMs([
  '@google-cloud/firestore',
  '@google-cloud/pubsub',
  '@google-cloud/storage',
]);
console.log(`  ${'(the three @google-cloud SDKs together)'.padEnd(40)} ${Math.round(sdks - baseline)} ms`);

function routeModules(): string[] {
  return readdirSync('functions', { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name === 'routes.ts')
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

async function medianImportMs(specifiers: string | string[]): Promise<number> {
  const list = (Array.isArray(specifiers) ? specifiers : [specifiers]).map((s) => JSON.stringify(s));
  const script = `const t = performance.now(); await Promise.all([${list.map((s) => `import(${s})`).join(',')}]); console.log(performance.now() - t);`;
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    runs.push(Number(out.trim().split('\n').pop()));
  }
  return runs.sort((a, b) => a - b)[2]!;
}
