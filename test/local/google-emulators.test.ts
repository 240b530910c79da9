import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Firestore } from '@google-cloud/firestore';
import { PubSub } from '@google-cloud/pubsub';
import { describe, expect, it } from 'vitest';
import { testProjectId } from '../helpers/app.ts';

describe('the Google emulators of the test run', () => {
  it('serve the real Firestore client, transactions included', async () => {
    const db = new Firestore({ projectId: testProjectId() });
    const ref = db.collection('probe').doc('counter');
    await ref.set({ n: 0 });
    await Promise.all(
      Array.from({ length: 5 }, () =>
        db.runTransaction(async (tx) => {
          const snap = await tx.get(ref);
          tx.update(ref, { n: (snap.get('n') as number) + 1 });
        }),
      ),
    );
    expect((await ref.get()).get('n')).toBe(5);
    await db.terminate();
  });

  it('isolate test files by project id', async () => {
    const a = new Firestore({ projectId: testProjectId() });
    const b = new Firestore({ projectId: testProjectId() });
    await a.collection('probe').doc('x').set({ owner: 'a' });
    expect((await b.collection('probe').doc('x').get()).exists).toBe(false);
    await Promise.all([a.terminate(), b.terminate()]);
  });

  it('serve the real Pub/Sub client: publish then pull', async () => {
    const pubsub = new PubSub({ projectId: testProjectId() });
    const [topic] = await pubsub.createTopic(`probe-${randomUUID().slice(0, 8)}`);
    const [subscription] = await topic.createSubscription('probe-sub');
    const received = new Promise<string>((resolve) => {
      subscription.on('message', (message) => {
        message.ack();
        resolve(message.data.toString());
      });
    });
    await topic.publishMessage({ data: Buffer.from('hello') });
    expect(await received).toBe('hello');
    await subscription.close();
    await pubsub.close();
  });
});

describe('guarded child processes', () => {
  it('die with their parent even when the parent is SIGKILLed', async () => {
    const marker = `sluice-guard-probe-${randomUUID().slice(0, 8)}`;
    const parent = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import('${process.cwd()}/local/processes.ts').then(async ({ spawnGuarded }) => {
           await spawnGuarded('probe', 'bash', ['-c', 'echo ready; exec -a ${marker} sleep 600'], /ready/);
           console.log('started');
         });`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve) =>
        parent.stdout!.on('data', (d) => String(d).includes('started') && resolve()),
      );
      // `ready` comes just before bash replaces itself with the marked sleep: wait for the exec.
      await waitFor(() => processExists(marker), 5_000);
      expect(await processExists(marker)).toBe(true);
      parent.kill('SIGKILL');
      await waitFor(async () => !(await processExists(marker)), 5_000);
      expect(await processExists(marker)).toBe(false);
    } finally {
      // A failed check must not leave the parent (and its pipe) holding the test run open.
      parent.kill('SIGKILL');
    }
  });
});

async function processExists(marker: string): Promise<boolean> {
  const out = await new Promise<string>((resolve) => {
    const ps = spawn('ps', ['-eo', 'args']);
    let text = '';
    ps.stdout.on('data', (d) => {
      text += d;
    });
    ps.on('close', () => resolve(text));
  });
  return out.split('\n').some((line) => line.startsWith(marker));
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}
