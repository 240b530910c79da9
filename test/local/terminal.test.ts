/**
 * The `npm start` terminal is for people: readable lines (time, level, message), requests
 * shown only when they fail or are slow, so heartbeats and long polls do not bury the
 * ready line, job output and errors. `SLUICE_LOG_FORMAT=json` with `SLUICE_LOG_LEVEL=debug`
 * gives every request as JSON, as the cloud writes it for Cloud Logging.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type StackProcess, startStackProcess } from '../helpers/stack-process.ts';

/** Makes one request that succeeds and one that fails, then returns what the terminal shows after them. */
async function exercise(stack: StackProcess): Promise<string[]> {
  const before = stack.output().length;
  expect((await fetch(`${stack.url}/api/health`)).status).toBe(200);
  expect((await fetch(`${stack.url}/api/jobs/nope`)).status).toBe(401);
  // The failing request's line is the signal that both were logged (they are in order).
  for (let i = 0; i < 100 && !stack.output().slice(before).includes('/api/jobs/nope'); i++)
    await new Promise((r) => setTimeout(r, 50));
  return stack
    .output()
    .slice(before)
    .split('\n')
    .filter((line) => line.includes('/api/'));
}

describe('the npm start terminal', () => {
  it('shows readable lines, and a request only when it failed', async () => {
    const stack = await startStackProcess(mkdtempSync(join(tmpdir(), 'sluice-terminal-')));
    try {
      expect(
        stack
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{')),
      ).toEqual([]);
      const lines = await exercise(stack);
      expect(lines).toEqual([
        expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}request GET \/api\/jobs\/nope 401 [\d.]+ ms/),
      ]);

      // Anyone who can reach the stack chooses the path it logs, no login needed: an escape
      // sequence in it (retitle the window, clear the screen) is shown as text, not obeyed.
      const before = stack.output().length;
      expect((await fetch(`${stack.url}/api/jobs/%1b%5d0;PWNED%07%1b%5b2J`)).status).toBe(401);
      for (let i = 0; i < 100 && !stack.output().slice(before).includes('PWNED'); i++)
        await new Promise((r) => setTimeout(r, 50));
      const shown = stack.output().slice(before);
      expect(shown).toContain('/api/jobs/\\x1b]0;PWNED\\x07\\x1b[2J 401');
      expect(shown).not.toContain('\u001b');
      expect(shown).not.toContain('\u0007');
    } finally {
      await stack.stop();
    }
  }, 60_000);

  it('gives every request as JSON with SLUICE_LOG_FORMAT=json and SLUICE_LOG_LEVEL=debug', async () => {
    const stack = await startStackProcess(mkdtempSync(join(tmpdir(), 'sluice-terminal-json-')), {
      SLUICE_LOG_FORMAT: 'json',
      SLUICE_LOG_LEVEL: 'debug',
    });
    try {
      const requests = (await exercise(stack))
        .map((line) => JSON.parse(line) as { msg: string; path: string; status: number })
        .filter((entry) => entry.msg === 'request' && !entry.path.startsWith('/api/worker/'));
      expect(requests.map((r) => [r.path, r.status])).toEqual([
        ['/api/health', 200],
        ['/api/jobs/nope', 401],
      ]);
    } finally {
      await stack.stop();
    }
  }, 60_000);
});
