/**
 * Ctrl-C is how a user ends `sluice events tail`, so it is its normal end: the process
 * stops polling and exits 0 (as `sluice worker run` does on the same signal), with nothing
 * more printed and nothing on stderr; not 130 (killed by the signal), which no command's
 * exit codes include. Whether the signal comes while the tail waits between polls or while
 * a poll is under way (whose answer is then not shown).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildEvent, eventsCollection } from '../../functions/events/event-log.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { bootstrapTestAdmin } from '../helpers/auth.ts';

let t: TestApp;
let server: { url: string; close(): Promise<void> };
let env: NodeJS.ProcessEnv;
/** While set, the server holds each request until it is released. */
let gate: { arrived: () => void; opened: Promise<void>; release: () => void } | undefined;
const children: ChildProcess[] = [];
/** Before the event below: every tail started with it prints that event on its first poll. */
const since = new Date(Date.now() - 60_000).toISOString();

beforeAll(async () => {
  t = await testApp();
  const token = await bootstrapTestAdmin(t);
  server = await serveHeldApp(t);
  env = { ...process.env, SLUICE_SERVER: server.url, SLUICE_TOKEN: token, SLUICE_CONFIG_DIR: '/nonexistent' };
  await append('one');
});
afterEach(() => {
  gate?.release();
  // A tail that did not end on the signal would poll on for ever.
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});
afterAll(async () => {
  await server.close();
  await t.close();
});

async function append(note: string): Promise<void> {
  const event = buildEvent({ type: 'job-updated', source: 'server', job: 'tailed', payload: { note } });
  await eventsCollection(await t.deps.clients.firestore(), 'default')
    .doc(event.id)
    .set(event);
}

/**
 * The test app over HTTP, holding requests while `gate` is set. Closing waits for the
 * requests it is still handling (a killed tail's among them): the app's clients close next.
 */
async function serveHeldApp(app: TestApp): Promise<{ url: string; close(): Promise<void> }> {
  const { serve } = await import('@hono/node-server');
  const handling = new Set<Promise<Response>>();
  const answer = async (request: Request) => {
    if (gate) {
      gate.arrived();
      await gate.opened;
    }
    return await app.app.fetch(request);
  };
  const fetch = (request: Request) => {
    const answering = answer(request);
    handling.add(answering);
    answering.finally(() => handling.delete(answering)).catch(() => {});
    return answering;
  };
  return await new Promise((resolve) => {
    const served = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        async close() {
          await new Promise<void>((done) => served.close(() => done()));
          await Promise.allSettled([...handling]);
        },
      }),
    );
  });
}

/** Holds the requests that come from now on; `arrived` resolves with the first of them. */
function holdRequests(): { arrived: Promise<void>; open: () => void } {
  let arrived!: () => void;
  let open!: () => void;
  const held = {
    arrived: new Promise<void>((r) => {
      arrived = r;
    }),
    opened: new Promise<void>((r) => {
      open = r;
    }),
  };
  const release = () => {
    gate = undefined;
    open();
  };
  gate = { arrived, opened: held.opened, release };
  return { arrived: held.arrived, open: release };
}

interface Tail {
  /** Resolves once the tail printed its first line: it is polling. */
  firstLine: Promise<void>;
  /** Resolves when the process has exited, with what it wrote. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  child: ChildProcess;
}

function startTail(interval: string): Tail {
  const child = spawn(
    process.execPath,
    ['bin/sluice.js', 'events', 'tail', '--job', 'tailed', '--since', since, '--interval', interval],
    { env },
  );
  children.push(child);
  let stdout = '';
  let stderr = '';
  let printed: () => void;
  const firstLine = new Promise<void>((resolve) => {
    printed = resolve;
  });
  child.stdout!.on('data', (chunk) => {
    stdout += chunk;
    if (stdout.includes('\n')) printed();
  });
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<Awaited<Tail['exited']>>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, firstLine, exited };
}

/** Resolves once the tail printed its first line, failing if it exits before. */
async function polling(tail: Tail): Promise<void> {
  await Promise.race([
    tail.firstLine,
    tail.exited.then((r) => {
      throw new Error(`the tail exited before polling: ${JSON.stringify(r)}`);
    }),
  ]);
}

/** The notes of the events a tail printed. */
function notes(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line).payload.note);
}

describe('sluice events tail ended with Ctrl-C', () => {
  it.each([
    ['waiting between polls', '1h'],
    ['polling again and again', '100ms'],
  ])(
    'exits 0 with nothing more printed, %s',
    async (_, interval) => {
      const tail = startTail(interval);
      await polling(tail);
      tail.child.kill('SIGINT');

      const r = await tail.exited;
      expect({ code: r.code, signal: r.signal, stderr: r.stderr }).toEqual({
        code: 0,
        signal: null,
        stderr: '',
      });
      expect(notes(r.stdout)).toEqual(['one']);
    },
    30_000,
  );

  it('exits 0 during a poll, and shows nothing of what that poll reads', async () => {
    const tail = startTail('100ms');
    await polling(tail);
    const held = holdRequests();
    await held.arrived;
    await append('two');
    tail.child.kill('SIGINT');
    // Not a wait for the result: the poll's answer, which holds `two`, must come after the
    // signal, and the process cannot say when it has taken it.
    await new Promise((r) => setTimeout(r, 300));
    held.open();

    const r = await tail.exited;
    expect({ code: r.code, signal: r.signal, stderr: r.stderr }).toEqual({
      code: 0,
      signal: null,
      stderr: '',
    });
    expect(notes(r.stdout)).toEqual(['one']);
  }, 30_000);
});
