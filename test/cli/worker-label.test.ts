import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type ServedCli, servedCli } from '../helpers/cli.ts';

let served: ServedCli;

beforeAll(async () => {
  served = await servedCli();
});
afterAll(() => served.close());

const cli = (args: string[], stdin?: string) => served.run(args, stdin);

async function labelsOf(id: string): Promise<unknown> {
  const r = await cli(['worker', 'get', id, '-o', 'json']);
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { labels: unknown }).labels;
}

describe('sluice worker create|enroll --label', () => {
  it('takes one KEY=VALUE per --label, so the worker id may follow it', async () => {
    const r = await cli(['worker', 'create', '--label', 'zone=a', 'edge-1', '-o', 'json']);
    expect(r.stderr).not.toContain('missing');
    expect(r.code).toBe(0);
    expect(await labelsOf('edge-1')).toEqual({ zone: 'a' });
  });

  it('repeats --label for more labels', async () => {
    const r = await cli(['worker', 'create', 'edge-2', '--label', 'a=1', '--label', 'b=2']);
    expect(r.code).toBe(0);
    expect(await labelsOf('edge-2')).toEqual({ a: '1', b: '2' });
  });

  it('refuses a label without "=" with exit 2', async () => {
    const r = await cli(['worker', 'create', 'edge-3', '--label', 'zone']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('KEY=VALUE');
  });

  it('repeats --label on enroll too', async () => {
    const created = await cli(['enrollment-secret', 'create', 'labels', '-o', 'json']);
    const { secret } = JSON.parse(created.stdout) as { secret: string };
    const r = await runCli(
      ['worker', 'enroll', '--label', 'zone=b', '--label', 'tier=edge', '--id', 'edge-4'],
      {
        env: { SLUICE_SERVER: served.url },
        stdin: secret,
      },
    );
    expect(r.code).toBe(0);
    expect(await labelsOf('edge-4')).toEqual({ zone: 'b', tier: 'edge' });
  });
});
