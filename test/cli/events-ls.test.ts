/**
 * `sluice events ls` shows what happened recently: the newest `--limit` events (default
 * 100), oldest first, following the API's pages (at most 1,000 events each) however many
 * that takes, and says on stderr when older events were left out. `--since` takes any
 * RFC 3339 time, offsets included; a bad `--since` or `--limit` is a usage error (exit 2).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventIdTime, eventsCollection } from '../../functions/events/event-log.ts';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';

let t: TestApp;
let server: { url: string; close(): Promise<void> };
let env: NodeJS.ProcessEnv;

/** Events of job `many`: one a minute over about 20 hours, the newest a few seconds ago. */
const MANY = 1205;
const made: number[] = [];

beforeAll(async () => {
  t = await testApp();
  const token = await bootstrapTestAdmin(t);
  server = await serveTestApp(t);
  env = { SLUICE_SERVER: server.url, SLUICE_TOKEN: token };
  const db = await t.deps.clients.firestore();
  const events = eventsCollection(db, 'default');
  const newest = Date.now() - 5_000;
  const write = async (job: string, count: number, stepMs: number, times: number[]) => {
    for (let from = 0; from < count; from += 500) {
      const batch = db.batch();
      for (let i = from; i < Math.min(count, from + 500); i++) {
        const at = new Date(newest - (count - 1 - i) * stepMs);
        times.push(at.getTime());
        const id = `${eventIdTime(at)}-0000${i.toString(16).padStart(8, '0')}`;
        batch.set(events.doc(id), {
          id,
          type: 'job-updated',
          kind: 'system',
          source: 'server',
          job,
          time: at.toISOString(),
          payload: { n: i },
        });
      }
      await batch.commit();
    }
  };
  await write('many', MANY, 60_000, made);
  await write('few', 3, 1_000, []);
}, 60_000);
afterAll(async () => {
  await server.close();
  await t.close();
});

const numbers = (stdout: string) =>
  (JSON.parse(stdout) as { payload: { n: number } }[]).map((e) => e.payload.n);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('sluice events ls', () => {
  it('shows the newest 100 events, oldest first, and says that older ones were left out', async () => {
    const r = await runCli(['events', 'ls', '--job', 'many', '-o', 'json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(numbers(r.stdout)).toEqual(range(MANY - 100, MANY));
    expect(r.stderr).toContain('newest 100');
    expect(r.stderr).toContain('--limit');
    expect(r.stderr).toContain('--since');
  });

  it('follows the pages past what the API gives at once for a --limit above 1,000', async () => {
    const all = await runCli(['events', 'ls', '--job', 'many', '--limit', '5000', '-o', 'json'], { env });
    expect(all.code, all.stderr).toBe(0);
    expect(numbers(all.stdout)).toEqual(range(0, MANY));
    expect(all.stderr).not.toContain('left out');

    const most = await runCli(['events', 'ls', '--job', 'many', '--limit', '1100', '-o', 'json'], { env });
    expect(most.code, most.stderr).toBe(0);
    expect(numbers(most.stdout)).toEqual(range(MANY - 1100, MANY));
    expect(most.stderr).toContain('left out');

    const exact = await runCli(['events', 'ls', '--job', 'many', '--limit', String(MANY), '-o', 'json'], {
      env,
    });
    expect(numbers(exact.stdout)).toEqual(range(0, MANY));
    expect(exact.stderr).not.toContain('left out');
  });

  it('shows a short log whole, without a note', async () => {
    const r = await runCli(['events', 'ls', '--job', 'few', '-o', 'json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(numbers(r.stdout)).toEqual([0, 1, 2]);
    expect(r.stderr).toBe('');
    const table = await runCli(['events', 'ls', '--job', 'few'], { env });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain('job-updated');
  });

  it('takes --since as any RFC 3339 time, with an offset too', async () => {
    const at = made[MANY - 10]!;
    // The same instant, written as a clock one hour ahead of UTC shows it.
    const plusOne = new Date(at + 3_600_000).toISOString().replace('Z', '+01:00');
    const r = await runCli(['events', 'ls', '--job', 'many', '--since', plusOne, '-o', 'json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(numbers(r.stdout)).toEqual(range(MANY - 10, MANY));
    expect(r.stderr).toBe('');

    const newest = await runCli(
      ['events', 'ls', '--job', 'many', '--since', plusOne, '--limit', '3', '-o', 'json'],
      { env },
    );
    expect(numbers(newest.stdout)).toEqual(range(MANY - 3, MANY));
    expect(newest.stderr).toContain('left out');
    // --since is given already: the note asks for a larger --limit only.
    expect(newest.stderr).toContain(`show more of those since ${plusOne} with a larger --limit N`);
    expect(newest.stderr).not.toContain('--since TIME');
  });

  it('refuses a --since that is not a time, saying what it expects', async () => {
    for (const since of ['yesterday', '2026-13-01T00:00:00Z', '']) {
      const r = await runCli(['events', 'ls', '--since', since], { env });
      expect(r.code, since).toBe(2);
      expect(r.stderr).toContain('--since');
      expect(r.stderr).toContain('RFC 3339');
    }
  });

  it('refuses a --limit that is not a whole number of 1 or more', async () => {
    for (const limit of ['0', '-1', 'all', '1.5']) {
      const r = await runCli(['events', 'ls', '--limit', limit], { env });
      expect(r.code, limit).toBe(2);
      expect(r.stderr).toContain('--limit takes a whole number');
    }
  });
});
