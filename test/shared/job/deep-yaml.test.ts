import { describe, expect, it } from 'vitest';
import { parseJobYaml } from '../../../shared/job/parse.ts';

const job = (depth: number) =>
  `name: deep\ninput:\n  http-poll:\n    url: https://x.test/\n    headers: ${'['.repeat(depth)}${']'.repeat(depth)}\noutput:\n  print: {}\n`;

describe('a job file nested too deep', () => {
  it('is refused saying so, however deep (the parser overflowed its stack and said that)', () => {
    for (const depth of [100, 5000]) {
      const result = parseJobYaml(job(depth));
      expect(result.ok, String(depth)).toBe(false);
      if (result.ok) continue;
      expect(result.errors.map((e) => e.message)).toEqual([
        'maps and lists nest more than 64 levels deep: a job needs only a few',
      ]);
    }
  });

  it('at a depth a job can have, the usual field errors are given instead', () => {
    const result = parseJobYaml(job(3));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]!.path).toBe('input.http-poll.headers');
  });
});
