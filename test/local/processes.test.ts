/**
 * local/processes.ts: what a child prints reaches its `onOutput`, also what it printed
 * before it said it was ready (a runner process may take a run request and print its
 * events before its ready line: those lines were lost, and a kill test waited for them).
 */
import { expect, it } from 'vitest';
import { spawnGuarded } from '../../local/processes.ts';

it('hands every line to onOutput, also those printed before the ready line', async () => {
  const printed: string[] = [];
  const child = await spawnGuarded(
    'early printer',
    'bash',
    ['-c', 'echo early-1; echo early-2; sleep 0.2; echo ready >&2; echo late; exec sleep 600'],
    /ready/,
    { onOutput: (chunk, stream) => stream === 'stdout' && printed.push(chunk.toString()) },
  );
  try {
    const deadline = Date.now() + 5_000;
    while (!printed.join('').includes('late') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(printed.join('')).toBe('early-1\nearly-2\nlate\n');
  } finally {
    await child.stop();
  }
});

it('forgets a child that ended by itself (a runner restarted after each kill added a listener for good)', async () => {
  const before = process.listenerCount('exit');
  for (let i = 0; i < 3; i++) {
    const child = await spawnGuarded('short-lived', 'bash', ['-c', 'echo ready; sleep 0.1'], /ready/);
    await child.exited;
  }
  // The listener goes when the child's exit has been seen, just after `exited` resolves.
  await new Promise((r) => setImmediate(r));
  expect(process.listenerCount('exit')).toBe(before);
});
