/**
 * An interval trigger of 0 would poll without pause (a reviewer saw 2,138 requests in 2 s):
 * `sluice job validate` and the API refuse it, naming the field; any wait above 0 is fine.
 */
import { expect, it } from 'vitest';
import { parseJobYaml } from '../../shared/job/index.ts';

const job = (duration: string) =>
  `name: z\ninput:\n  http-poll:\n    url: https://example.org/s\n    trigger:\n      interval:\n        duration: ${duration}\noutput:\n  discard: {}\n`;

it('refuses an interval of 0, naming the field and its line', () => {
  for (const zero of ['0s', '0ms', '0m0s']) {
    const parsed = parseJobYaml(job(zero));
    expect(parsed.ok, zero).toBe(false);
    if (parsed.ok) continue;
    expect(parsed.errors).toEqual([
      expect.objectContaining({
        path: 'input.http-poll.trigger.interval.duration',
        line: 7,
        message: expect.stringContaining('must be more than 0'),
      }),
    ]);
  }
});

it('takes any wait above 0', () => {
  for (const wait of ['1ms', '500ms', '5m']) expect(parseJobYaml(job(wait)).ok, wait).toBe(true);
});
