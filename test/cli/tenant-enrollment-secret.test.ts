import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type ServedCli, servedCli } from '../helpers/cli.ts';

let served: ServedCli;

beforeAll(async () => {
  served = await servedCli();
});
afterAll(() => served.close());

const cli = (args: string[], stdin?: string) => served.run(args, stdin);

describe('sluice tenant', () => {
  it('creates a tenant the system admin can then add users to, and lists it', async () => {
    const before = await cli(
      ['user', 'create', 'bob', '--role', 'admin', '--tenant', 'acme', '--password-stdin'],
      'correct-horse-battery\n',
    );
    expect(before.code).toBe(4);

    const created = await cli(['tenant', 'create', 'acme', '-o', 'json']);
    expect(created.code).toBe(0);
    expect(created.stderr).toContain(
      'sluice user create USERNAME --role admin --tenant acme --password-stdin',
    );
    expect(JSON.parse(created.stdout)).toMatchObject({ name: 'acme' });

    const again = await cli(['tenant', 'create', 'acme']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('tenant acme already exists');

    const user = await cli(
      ['user', 'create', 'bob', '--role', 'admin', '--tenant', 'acme', '--password-stdin'],
      'correct-horse-battery\n',
    );
    expect(user.code).toBe(0);

    const ls = await cli(['tenant', 'ls']);
    expect(ls.code).toBe(0);
    expect(ls.stdout).toMatch(/NAME\s+CREATED_AT/);
    expect(ls.stdout).toMatch(/^acme\s/m);
    expect(ls.stdout).toMatch(/^default\s/m);
  });

  it('exits 2 without a name, and 1 with the rule for a bad one', async () => {
    expect((await cli(['tenant', 'create'])).code).toBe(2);
    const bad = await cli(['tenant', 'create', 'Bad_Name']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('lowercase letters, digits and -');
  });

  it('is refused (exit 3) to a tenant admin who is not the system admin', async () => {
    const made = await cli(
      ['user', 'create', 'carol', '--role', 'admin', '--password-stdin'],
      'correct-horse-battery\n',
    );
    expect(made.code).toBe(0);
    const token = await runCli(['token', 'user', 'carol', '--password-stdin'], {
      env: { SLUICE_SERVER: served.url },
      stdin: 'correct-horse-battery',
    });
    const r = await runCli(['tenant', 'create', 'other'], {
      env: { SLUICE_SERVER: served.url, SLUICE_TOKEN: token.stdout.trim() },
    });
    expect(r.code).toBe(3);
  });
});

describe('sluice enrollment-secret', () => {
  it('creates a secret printed once, lists it without the secret, enrolls a worker with it, and removes it', async () => {
    const created = await cli([
      'enrollment-secret',
      'create',
      'fleet',
      '--expires-in',
      '1h',
      '--max-uses',
      '2',
      '-o',
      'json',
    ]);
    expect(created.code).toBe(0);
    expect(created.stderr).toContain('not shown again');
    const { id, secret } = JSON.parse(created.stdout) as { id: string; secret: string };
    expect(secret).toMatch(/^sle_/);

    const ls = await cli(['enrollment-secret', 'ls']);
    expect(ls.code).toBe(0);
    expect(ls.stdout).toMatch(/ID\s+NAME\s+USES\s+MAX_USES\s+CREATED_AT\s+EXPIRES_AT/);
    expect(ls.stdout).toContain(id);
    expect(ls.stdout).toContain('fleet');
    expect(ls.stdout).not.toContain(secret);

    const json = JSON.parse((await cli(['enrollment-secret', 'ls', '-o', 'json'])).stdout) as Array<
      Record<string, unknown>
    >;
    expect(json.find((s) => s.id === id)).toMatchObject({ name: 'fleet', max_uses: 2, uses: 0 });

    const enrolled = await runCli(['worker', 'enroll', '--id', 'edge-9', '-o', 'json'], {
      env: { SLUICE_SERVER: served.url },
      stdin: secret,
    });
    expect(enrolled.code).toBe(0);

    const rm = await cli(['enrollment-secret', 'rm', id]);
    expect(rm.code).toBe(0);
    expect(rm.stderr).toContain(`deleted enrollment secret ${id}`);
    const missing = await cli(['enrollment-secret', 'rm', id]);
    expect(missing.code).toBe(4);
  });

  it('refuses a --max-uses that is not a whole number of 1 or more with exit 2', async () => {
    for (const bad of ['0', 'ten', '1.5']) {
      const r = await cli(['enrollment-secret', 'create', 'x', '--max-uses', bad]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--max-uses');
    }
  });
});
