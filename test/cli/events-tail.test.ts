/**
 * `sluice events tail` follows the log as a user runs it (its own process, polling the
 * API), and shows an event that becomes readable only after a newer one was shown: a write
 * whose commit was slow, so its id sorts before events already printed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEvent, eventsCollection } from '../../functions/events/event-log.ts';
import { serveTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { bootstrapTestAdmin } from '../helpers/auth.ts';
import { runCli } from '../helpers/cli.ts';

let t: TestApp;
let server: { url: string; close(): Promise<void> };
let env: NodeJS.ProcessEnv;
let child: ChildProcess | undefined;

beforeAll(async () => {
  t = await testApp();
  const token = await bootstrapTestAdmin(t);
  server = await serveTestApp(t);
  env = { ...process.env, SLUICE_SERVER: server.url, SLUICE_TOKEN: token, SLUICE_CONFIG_DIR: '/nonexistent' };
});
afterAll(async () => {
  child?.kill();
  await server.close();
  await t.close();
});

/**
 * Writes an event as another instance would that made it `ageMs` ago (its id and time)
 * and commits it only now. The id is written out here: this process's own ids never run
 * backwards.
 */
async function append(job: string, note: string, ageMs = 0): Promise<void> {
  const made = new Date(Date.now() - ageMs);
  const event = buildEvent({ type: 'job-updated', source: 'server', job, payload: { note } }, made);
  if (ageMs) {
    event.id = `${made.toISOString().replace(/[-:.TZ]/g, '')}-0000${note.length.toString(16).padStart(8, '0')}`;
    event.time = made.toISOString();
  }
  await eventsCollection(await t.deps.clients.firestore(), 'default')
    .doc(event.id)
    .set(event);
}

describe('sluice events tail', () => {
  it('prints each new event once, including one that commits late behind a newer one', async () => {
    const since = new Date().toISOString();
    child = spawn(
      process.execPath,
      ['bin/sluice.js', 'events', 'tail', '--job', 'late', '--interval', '200', '--since', since],
      { env },
    );
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
    });
    const notes = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line).payload.note);
    const printed = async (count: number) => {
      for (let i = 0; i < 300 && notes().length < count; i++) await new Promise((r) => setTimeout(r, 50));
      return notes();
    };
    // Not a wait for the child: the late event below is made 1.5 s in the past, and that
    // time must still be after --since (the tail prints events whenever its first poll comes).
    await new Promise((r) => setTimeout(r, 2000));
    await append('late', 'first');
    await append('other', 'another job');
    expect(await printed(1)).toEqual(['first']);
    // Made 1.5 s ago (after --since) but readable only now: its id sorts before `first`.
    await append('late', 'slow commit', 1_500);
    await append('late', 'third');
    expect(await printed(3)).toEqual(['first', 'slow commit', 'third']);
    // Polled again and again: still each once. The proof that the tail polled after
    // printing `third` is a fourth event it printed; nothing came out twice on the way.
    await append('other', 'not this job');
    await append('late', 'fourth');
    expect(await printed(4)).toEqual(['first', 'slow commit', 'third', 'fourth']);
  }, 30_000);

  it('refuses a --since that is not a time, saying what it expects', async () => {
    const r = await runCli(['events', 'tail', '--since', 'yesterday'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--since');
    expect(r.stderr).toContain('RFC 3339');
  });

  it('refuses an --interval that is not a sensible wait, before it polls at all', async () => {
    for (const interval of ['abc', '0', '-5', '2x', '10d', '']) {
      // Raced against a timer: a tail that took it would poll on and never return.
      const r = await Promise.race([
        runCli(['events', 'tail', '--interval', interval], { env }),
        new Promise<undefined>((r) => setTimeout(r, 3_000)),
      ]);
      expect(r?.code, interval).toBe(2);
      expect(r?.stderr).toContain('--interval');
      expect(r?.stderr).toContain('2s');
    }
  });
});
