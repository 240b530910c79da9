// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret|..} and ${dyn|..} are literal job text here
/**
 * Malformed references are refused where they are written (validate, save, render) instead of
 * going out to workers as literal text; ordinary text holding braces and dollars still passes.
 */
import { describe, expect, it } from 'vitest';
import { renderJob } from '../../../shared/context/render.ts';
import { validateJob } from '../../../shared/job/index.ts';

const job = (httpPoll: Record<string, unknown>, rest: Record<string, unknown> = {}) => ({
  name: 'j',
  input: { 'http-poll': { url: 'http://example.com/', method: 'POST', ...httpPoll } },
  output: { print: {} },
  ...rest,
});

const errorsOf = (result: { ok: true } | { ok: false; errors: { path: string; message: string }[] }) =>
  result.ok ? [] : result.errors;

/** Each malformed form, in a plain string field (body) and in a typed one (url). */
const MALFORMED: [string, RegExp][] = [
  ['{{ }}', /empty context reference/],
  ['x {{a b}} y', /`\{\{a b\}\}` is not a context reference/],
  ['{{unclosed', /`\{\{unclosed` opens a context reference that is not closed/],
  ['${secret|a}', /`\$\{secret\|a\}` is not a secret reference: write \$\{secret\|scope\/name\}/],
  ['${secrets|x/y}', /`\$\{secrets\|` is not a runtime reference.*did you mean `\$\{secret\|`/],
  ['${secret|a/b||fallback}', /a secret reference has no default form/],
  ['${dyn|}', /is not a variable reference/],
  ['${dyn|A|B}', /is not a variable reference/],
  ['${dyn|X', /has no closing \}/],
];

describe('malformed references at the saved and stored levels', () => {
  for (const [text, message] of MALFORMED) {
    it(`refuses ${JSON.stringify(text)} at the field that holds it`, () => {
      for (const level of ['saved', 'stored'] as const) {
        const inBody = errorsOf(validateJob(job({ body: text }), { level }));
        expect(inBody).toEqual([{ path: 'input.http-poll.body', message: expect.stringMatching(message) }]);
        const inHeader = errorsOf(validateJob(job({ headers: { 'x-a': `v ${text}` } }), { level }));
        expect(inHeader).toEqual([
          { path: 'input.http-poll.headers.x-a', message: expect.stringMatching(message) },
        ]);
        const inUrl = errorsOf(validateJob(job({ url: `http://example.com/${text}` }), { level }));
        expect(inUrl).toEqual([{ path: 'input.http-poll.url', message: expect.stringMatching(message) }]);
      }
    });
  }

  it('refuses them in action expressions and timestamp formats, before rendering', () => {
    const actions = [
      { filter: "event.a == '{{ }}'" },
      { set: { b: "'${dyn|}'" } },
      { 'parse-timestamp': { field: 't', format: '%Y{{a b}}' } },
    ];
    for (const level of ['saved', 'stored'] as const) {
      expect(errorsOf(validateJob(job({}, { actions }), { level }))).toEqual([
        { path: 'actions.0.filter', message: expect.stringMatching(/empty context reference/) },
        { path: 'actions.1.set.b', message: expect.stringMatching(/is not a variable reference/) },
        {
          path: 'actions.2.parse-timestamp.format',
          message: expect.stringMatching(/`\{\{a b\}\}` is not a context reference/),
        },
      ]);
    }
  });

  it('does not echo what follows || in a secret reference', () => {
    for (const body of ['${secret|db/pw||hunter2}', '${secret|db/pw||hunter2', '${secret||hunter2}']) {
      const [error] = errorsOf(validateJob(job({ body }), { level: 'saved' }));
      expect(error!.message, body).toMatch(/\|\|…/);
      expect(error!.message, body).not.toContain('hunter2');
    }
  });

  it('keeps ordinary text with braces and dollars valid', () => {
    const ordinary = [
      '{"a":{"b":[1,{"c":2}]}}',
      'a{2}b{1,3}',
      '$HOME and ${HOME} and ${HOME:-/root} and $',
      'a lone { and } and ${',
      'js: `${a||b}` and ${ a | b }',
      'literal \\{{not_a_key}} and \\{{ }} and \\{{unclosed',
      '{{{k}}}',
      '{{ k }} {{k.sub}} {{k.0}} {{_k-1}}',
      '${secret|db/password} ${secret| api/token } ${dyn|ENV} ${dyn|ENV||dev} ${dyn|ENV||} ${dyn|A||x|y}',
      '${secret|{{scope}}/token} ${dyn|{{prefix}}_URL||none} ${secret|{{ref}}}',
      'GitHub: ${{ k }}',
    ];
    for (const body of ordinary) {
      for (const level of ['saved', 'stored'] as const) {
        expect(errorsOf(validateJob(job({ body }), { level })), `${level}: ${body}`).toEqual([]);
      }
    }
    expect(errorsOf(validateJob(job({ url: 'http://example.com/a{2}?q=${x}' }), { level: 'saved' }))).toEqual(
      [],
    );
  });

  it('checks a long string of braces in linear time', () => {
    const braces = '{'.repeat(1024 * 1024);
    const started = performance.now();
    const errors = errorsOf(validateJob(job({ body: braces }), { level: 'stored' }));
    const dollars = errorsOf(validateJob(job({ body: '${dyn|'.repeat(150_000) }), { level: 'stored' }));
    const opens = errorsOf(validateJob(job({ body: '{{ '.repeat(300_000) }), { level: 'stored' }));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(errors).toEqual([{ path: 'input.http-poll.body', message: expect.stringMatching(/not closed/) }]);
    expect(dollars).toHaveLength(1);
    expect(opens).toHaveLength(1);
  });
});

describe('malformed references when rendering', () => {
  it('refuses a malformed {{...}} in a stored definition, naming the field', () => {
    for (const [text, message] of MALFORMED.slice(0, 3)) {
      const result = renderJob(job({ body: `x ${text}` }), { a: 'v' });
      expect(errorsOf(result), text).toEqual([
        { path: 'input.http-poll.body', message: expect.stringMatching(message) },
      ]);
    }
  });

  it('refuses a malformed ${...} that a definition or a context value brings in', () => {
    for (const [text, message] of MALFORMED.slice(3)) {
      const written = renderJob(job({ headers: { 'x-a': text } }), {});
      expect(errorsOf(written), text).toEqual([
        { path: 'input.http-poll.headers.x-a', message: expect.stringMatching(message) },
      ]);
      const inserted = renderJob(job({ headers: { 'x-a': 'Bearer {{token}}' } }), { token: text });
      expect(errorsOf(inserted), text).toEqual([
        { path: 'input.http-poll.headers.x-a', message: expect.stringMatching(message) },
      ]);
    }
  });

  it('refuses them in action expressions too', () => {
    const result = renderJob(
      job({}, { actions: [{ filter: "event.a == '{{ }}'" }, { set: { b: "'${dyn|}'" } }] }),
      {},
    );
    expect(errorsOf(result)).toEqual([
      { path: 'actions.0.filter', message: expect.stringMatching(/empty context reference/) },
    ]);
    const runtime = renderJob(job({}, { actions: [{ set: { b: "'${dyn|}'" } }] }), {});
    expect(errorsOf(runtime)).toEqual([
      { path: 'actions.0.set.b', message: expect.stringMatching(/is not a variable reference/) },
    ]);
  });

  it('renders the escape and well-formed references as before', () => {
    const result = renderJob(
      job({
        body: '\\{{ }} {{{k}}} ${secret|{{scope}}/token} ${dyn|ENV||dev} a{2} ${HOME}',
        headers: { authorization: 'Bearer ${secret|api/token}' },
      }),
      { k: 'v', scope: 'api' },
    );
    expect(result.ok && result.definition.input['http-poll']).toMatchObject({
      body: '{{ }} {v} ${secret|api/token} ${dyn|ENV||dev} a{2} ${HOME}',
      headers: { authorization: 'Bearer ${secret|api/token}' },
    });
  });

  it('renders a long string of braces in linear time', () => {
    const started = performance.now();
    const result = renderJob(job({ body: '{'.repeat(1024 * 1024) }), {});
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(errorsOf(result)).toEqual([
      { path: 'input.http-poll.body', message: expect.stringMatching(/not closed/) },
    ]);
  });
});
