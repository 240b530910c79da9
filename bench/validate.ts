/**
 * `npm run bench:validate`: validations per second of a realistic 60-line gcs job
 * (test/fixtures/jobs/gcs-full.yaml) on one core: YAML parse + saved-level validation,
 * and validation alone at both levels. Target: at least 20,000/s.
 *
 * Then what a hostile job costs to validate (shared/regex.ts bounds compiling patterns):
 * one whose two 10 KB patterns expand to 700,000 steps each (13 s in the API before the
 * bound), and the costliest one the bound lets through (patterns up to JOB_REGEX_BUDGET).
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { parseJobYaml, validateJob } from '../shared/job/index.ts';
import { JOB_REGEX_BUDGET } from '../shared/job/validate.ts';
import { MAX_REGEX_SIZE } from '../shared/regex.ts';

const text = readFileSync('test/fixtures/jobs/gcs-full.yaml', 'utf8');
const value = parse(text);
const rendered = JSON.parse(
  JSON.stringify(value)
    .replaceAll('{{bucket}}', 'acme-logs-prod')
    .replaceAll('{{worker}}', 'w1')
    .replaceAll('{{lookback}}', '10m'),
);

function rate(name: string, run: () => boolean, seconds = 2): void {
  for (let i = 0; i < 2000; i++) if (!run()) throw new Error(`${name}: invalid`);
  let count = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  while (performance.now() < until) {
    for (let i = 0; i < 200; i++) run();
    count += 200;
  }
  const perSecond = count / ((performance.now() - started) / 1000);
  console.log(
    `${name.padEnd(42)} ${Math.round(perSecond).toLocaleString('en-US').padStart(9)} /s  (${(1e6 / perSecond).toFixed(1)} µs each)`,
  );
}

console.log(`job file: ${text.split('\n').length} lines; one core (single-threaded)`);
rate('parse YAML + validate (saved level)', () => parseJobYaml(text).ok);
rate('validate only, saved level', () => validateJob(value, { level: 'saved' }).ok);
rate('validate only, rendered level', () => validateJob(rendered, { level: 'rendered' }).ok);

/** A gcs job with these include-regex patterns. */
const withPatterns = (patterns: string[]) => ({
  name: 'patterns',
  input: {
    gcs: {
      'bucket-name': 'bench-bucket',
      credentials: { 'storage-url': 'gs://bench-bucket' },
      'object-names': [],
      'include-regex': patterns,
    },
  },
  output: { print: {} },
});
/** Milliseconds to validate the job `make(run)` gives (fresh patterns each run: none cached). */
function worst(name: string, make: (run: number) => unknown, runs = 5): void {
  const times: number[] = [];
  let ok = false;
  for (let run = 0; run < runs; run++) {
    const job = make(run);
    const started = performance.now();
    ok = validateJob(job, { level: 'saved' }).ok;
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(42)} ${times[times.length >> 1]!.toFixed(1).padStart(9)} ms  (median of ${runs}, max ${times[runs - 1]!.toFixed(1)} ms; ${ok ? 'accepted' : 'refused'})`,
  );
}
worst('hostile: 2 patterns of 700,000 steps', (run) =>
  withPatterns(['x', 'y'].map((tail) => `${'(?:a{0,999}c)|'.repeat(699)}${tail}${run}`)),
);
const largest = `[a-z0-9]{0,${Math.floor(MAX_REGEX_SIZE / 2) - 8}}`;
worst(`costliest allowed: ${JOB_REGEX_BUDGET.toLocaleString('en-US')} steps of patterns`, (run) =>
  withPatterns(Array.from({ length: 40 }, (_, i) => `r${run}p${i}-${largest}`)),
);
