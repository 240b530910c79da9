/**
 * `npm run bench:validate`: validations per second of a realistic 60-line gcs job
 * (test/fixtures/jobs/gcs-full.yaml) on one core: YAML parse + saved-level validation,
 * and validation alone at both levels. Target: at least 20,000/s.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { parseJobYaml, validateJob } from '../shared/job/index.ts';

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
