import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseJobYaml } from '../../../shared/job/index.ts';

const FIXTURE = readFileSync('test/fixtures/jobs/gcs-full.yaml');

function errors(text: string | Uint8Array) {
  const r = parseJobYaml(text);
  expect(r.ok).toBe(false);
  return r.ok ? [] : r.errors;
}

describe('reading job YAML', () => {
  it('accepts the realistic gcs job with every field', () => {
    const r = parseJobYaml(FIXTURE);
    expect(r.ok ? [] : r.errors).toEqual([]);
  });

  it('places each error at the line and column of its node', () => {
    const text = [
      'name: j',
      'input:',
      '  gcs:',
      '    bucket-name: ok-bucket',
      '    mode: listing',
      '    object-names: []',
      '    credentials:',
      '      storage-url: gs://ok-bucket',
      '    colour: blue',
      'output:',
      '  print: {}',
      '',
    ].join('\n');
    expect(errors(text)).toEqual([
      {
        path: 'input.gcs.mode',
        message: expect.stringContaining('`listing` is not allowed here'),
        line: 5,
        column: 11,
      },
      {
        path: 'input.gcs.colour',
        message: expect.stringContaining('unknown field `colour` at input.gcs'),
        line: 9,
        column: 5,
      },
    ]);
  });

  it('refuses an empty file, a list, a scalar', () => {
    expect(errors('')[0]!.message).toContain('the file is empty');
    expect(errors('- a\n- b\n')[0]!.message).toContain('not a list');
    expect(errors('just text\n')[0]!.message).toContain('not a single value');
  });

  it('refuses two input kinds and unknown kinds', () => {
    const two = 'name: j\ninput:\n  gcs: {}\n  http-poll: {}\noutput:\n  print: {}\n';
    expect(
      errors(two)
        .map((e) => e.message)
        .join('|'),
    ).toMatch(/required field|exactly one/);
    const unknown = 'name: j\ninput:\n  s3: {}\noutput:\n  print: {}\n';
    expect(errors(unknown)).toContainEqual(
      expect.objectContaining({
        path: 'input.s3',
        message: expect.stringContaining('unknown field `s3` at input'),
        line: 3,
        column: 3,
      }),
    );
  });

  it('refuses duplicate keys with their position', () => {
    const e = errors('name: a\nname: b\ninput: {}\noutput: {}\n');
    expect(e[0]).toMatchObject({ message: 'duplicate key: each field may appear once', line: 2 });
  });

  it('reports wrong types at every level', () => {
    const text =
      'name: 7\ncontext: [1]\ninput:\n  http-poll:\n    url: 42\n    json: maybe\n    headers: {a: 1}\noutput:\n  print: {x: 1}\n';
    const paths = errors(text).map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'name',
        'context',
        'input.http-poll.url',
        'input.http-poll.json',
        'input.http-poll.headers.a',
        'output.print.x',
      ]),
    );
  });

  it('refuses non-UTF-8 and oversized files', () => {
    expect(errors(Buffer.from([0x6e, 0x61, 0xff, 0xfe]))[0]!.message).toBe(
      'the file is not valid UTF-8 text',
    );
    expect(errors('a'.repeat(10 * 1024 * 1024))[0]!.message).toContain('at most 1 MiB');
  });

  it('refuses a billion-laughs document quickly instead of expanding it', () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 10; i++) {
      const prev = String.fromCharCode(96 + i);
      const next = String.fromCharCode(97 + i);
      lines.push(`${next}: &${next} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const started = performance.now();
    const e = errors(lines.join('\n') + '\n');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(e[0]!.message).toContain('expands too much through aliases');
  });

  it('refuses reserved and malformed context keys', () => {
    const text =
      'name: j\ncontext:\n  job: x\n  "a b": 1\ninput:\n  http-poll:\n    url: http://x\noutput:\n  print: {}\n';
    const messages = errors(text).map((e) => `${e.path}: ${e.message}`);
    expect(messages.join('|')).toContain('reserved');
    expect(messages.join('|')).toContain('context keys start with');
  });
});
