import { describe, expect, it } from 'vitest';
import { renderJob } from '../../../shared/context/render.ts';
import { resolveContext } from '../../../shared/context/resolve.ts';

const job = (httpPoll: Record<string, unknown>) => ({
  name: 'j',
  input: { 'http-poll': { url: 'http://example.com/', ...httpPoll } },
  output: { print: {} },
});

function render(httpPoll: Record<string, unknown>, context: Record<string, unknown>) {
  const result = renderJob(job(httpPoll), context as never);
  return result.ok ? { ok: true as const, input: result.definition.input['http-poll']! } : result;
}

describe('rendering', () => {
  it('interpolates {{key}} and {{ key }} inside strings', () => {
    const r = render({ url: 'http://{{host}}:{{ port }}/v1' }, { host: 'api.local', port: 8080 });
    expect(r.ok && r.input.url).toBe('http://api.local:8080/v1');
  });

  it('takes the JSON type when the string is exactly one reference', () => {
    const r = render(
      { json: '{{as_json}}', headers: '{{headers}}', timeout: '{{t}}' },
      {
        as_json: true,
        headers: { 'x-a': '1' },
        t: '5s',
      },
    );
    expect(r.ok && r.input).toMatchObject({ json: true, headers: { 'x-a': '1' }, timeout: '5s' });
  });

  it('reaches into objects and arrays with {{key.sub}} and {{key.0}}', () => {
    const r = render(
      { url: 'http://{{svc.hosts.1}}/{{svc.path}}' },
      { svc: { hosts: ['a', 'b'], path: 'p' } },
    );
    expect(r.ok && r.input.url).toBe('http://b/p');
  });

  it('inserts non-strings inside longer strings as compact JSON', () => {
    const r = render({ body: 'ids={{ids}} cfg={{cfg}}', method: 'POST' }, { ids: [1, 2], cfg: { a: 1 } });
    expect(r.ok && r.input.body).toBe('ids=[1,2] cfg={"a":1}');
  });

  it('keeps \\{{ as a literal {{', () => {
    const r = render({ body: 'literal \\{{not_a_key}} and {{k}}', method: 'POST' }, { k: 'v' });
    expect(r.ok && r.input.body).toBe('literal {{not_a_key}} and v');
  });

  it('passes ${secret|...} and ${dyn|...} through untouched', () => {
    const r = render(
      { headers: { authorization: 'Bearer ${secret|api/token}', 'x-env': '${dyn|ENV||dev}' } },
      {},
    );
    expect(r.ok && r.input.headers).toEqual({
      authorization: 'Bearer ${secret|api/token}',
      'x-env': '${dyn|ENV||dev}',
    });
  });

  it('reports every missing key with the field that used it', () => {
    const r = render(
      { url: 'http://{{host}}/{{path}}', headers: { a: '{{token}}' }, timeout: '{{svc.timeout}}' },
      { svc: {} },
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toEqual([
      { path: 'input.http-poll.url', message: 'missing context key `host`' },
      { path: 'input.http-poll.url', message: 'missing context key `path`' },
      { path: 'input.http-poll.headers.a', message: 'missing context key `token`' },
      { path: 'input.http-poll.timeout', message: 'context key `svc.timeout` does not resolve' },
    ]);
  });

  it('validates the rendered result with the real types', () => {
    const r = render({ json: '{{flag}}' }, { flag: 'not-a-boolean' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors[0]).toMatchObject({
      path: 'input.http-poll.json',
      message: expect.stringContaining('expected true or false'),
    });
  });

  it('has job and worker built in', () => {
    const { context } = resolveContext({
      job: 'jj',
      worker: 'ww',
      jobMap: {},
      workerMap: {},
      global: {},
      definition: {},
    });
    const r = render({ url: 'http://x/{{job}}/{{worker}}' }, context);
    expect(r.ok && r.input.url).toBe('http://x/jj/ww');
  });

  it('renders context values into action expressions, and names a missing key in one', () => {
    const definition = {
      name: 'j',
      input: { 'http-poll': { url: 'http://x/' } },
      actions: [{ filter: "event.level == '{{wanted}}'" }, { set: { env: "'{{env}}'" } }],
      output: { print: {} },
    };
    const rendered = renderJob(definition, { wanted: 'error', env: 'prod' });
    expect(rendered.ok && rendered.definition.actions).toEqual([
      { filter: "event.level == 'error'" },
      { set: { env: "'prod'" } },
    ]);
    const missing = renderJob(definition, { wanted: 'error' });
    expect(missing.ok ? [] : missing.errors).toEqual([
      expect.objectContaining({ path: 'actions.1.set.env', message: expect.stringContaining('env') }),
    ]);
  });
});
