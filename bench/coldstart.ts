/**
 * `npm run bench:coldstart`: the time to import each Cloud Function entry point in a
 * fresh Node process (median of 5), for the bundled output that deploys
 * (`dist/functions/<name>/index.js`, built first if missing), against importing the
 * three `@google-cloud/*` SDKs together the same way. Target: every entry at most
 * 0.4 x that baseline. The baseline is measured again for each entry, its imports
 * alternating with the entry's: on a shared machine a baseline taken once, minutes
 * before, made an entry miss by chance (0.43 x in one CI run, 0.30 x right after). Also reports which SDKs an entry loaded while importing: any
 * is a family importing an SDK eagerly instead of through functions/adapters/clients.ts.
 *
 *   npm run bench:coldstart              # exits 1 if an entry misses the target
 *   npm run bench:coldstart -- --runs 9
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { buildFunctions, OUT_DIR, ROOT } from '../scripts/build.ts';

const TARGET_RATIO = 0.4;
const SDKS = ['@google-cloud/firestore', '@google-cloud/pubsub', '@google-cloud/storage'];

/** Runs in the child: times the import, then lists the SDKs that ended up loaded. */
const PROBE = `
const started = performance.now();
await Promise.all(JSON.parse(process.argv[1]).map((m) => import(m)));
const ms = performance.now() - started;
const { createRequire } = await import('node:module');
const cache = createRequire(import.meta.url).cache;
const sdks = [...new Set(Object.keys(cache).map((p) => p.match(/node_modules\\/(@google-cloud\\/[^/]+)\\//)?.[1]).filter(Boolean))];
process.stdout.write(JSON.stringify({ ms, sdks }));
`;

interface Sample {
  ms: number;
  sdks: string[];
}

function importOnce(specifiers: string[]): Sample {
  const out = execFileSync(
    process.execPath,
    ['--input-type=module', '-e', PROBE, JSON.stringify(specifiers)],
    {
      cwd: ROOT,
      env: { ...process.env, SLUICE_LOG_LEVEL: 'silent', GOOGLE_CLOUD_PROJECT: 'demo-coldstart' },
      encoding: 'utf8',
    },
  );
  return JSON.parse(out) as Sample;
}

export function medianImport(specifiers: string[], runs: number): Sample {
  const samples = Array.from({ length: runs }, () => importOnce(specifiers)).sort((a, b) => a.ms - b.ms);
  return samples[Math.floor(runs / 2)]!;
}

/** `runs` imports of `specifiers` and of the baseline SDKs, alternating; the median of each. */
function pairedImports(specifiers: string[], runs: number): { entry: Sample; baselineMs: number } {
  const entry: Sample[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < runs; i++) {
    baseline.push(importOnce(SDKS).ms);
    entry.push(importOnce(specifiers));
  }
  entry.sort((a, b) => a.ms - b.ms);
  baseline.sort((a, b) => a - b);
  return { entry: entry[Math.floor(runs / 2)]!, baselineMs: baseline[Math.floor(runs / 2)]! };
}

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);

if (!existsSync(join(OUT_DIR, 'manifest.json'))) await buildFunctions();
const manifest = JSON.parse(readFileSync(join(OUT_DIR, 'manifest.json'), 'utf8')) as {
  functions: { name: string; kind: string }[];
};

// Bare specifiers, resolved from the project root exactly as a bundle's external imports are.
console.log(`cold import in a fresh Node process, median of ${runs} (bundled output in dist/functions/)`);
console.log('  baseline: the three @google-cloud SDKs together, measured alongside each entry');
console.log(`  target:   each entry <= ${TARGET_RATIO} x its baseline\n`);

let missed = 0;
for (const fn of manifest.functions) {
  const { entry: sample, baselineMs } = pairedImports(
    [pathToFileURL(join(OUT_DIR, fn.name, 'index.js')).href],
    runs,
  );
  const ratio = sample.ms / baselineMs;
  const ok = ratio <= TARGET_RATIO;
  if (!ok) missed++;
  const eager = sample.sdks.filter((sdk) => SDKS.includes(sdk));
  const sdks = eager.length ? `  loads ${eager.join(', ')} eagerly` : '';
  console.log(
    `  ${fn.name.padEnd(20)} ${fn.kind.padEnd(6)} ${sample.ms.toFixed(0).padStart(5)} ms  baseline ${baselineMs.toFixed(0).padStart(4)} ms  ${ratio.toFixed(2)} x  ${ok ? 'ok' : 'OVER'}${sdks}`,
  );
}
if (missed) {
  console.log(`\n${missed} entr${missed === 1 ? 'y misses' : 'ies miss'} the target`);
  process.exitCode = 1;
}
