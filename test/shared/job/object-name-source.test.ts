/**
 * `{source}` in the gcs output's `object-name` names each object after the gcs object its
 * events were read from, so that a re-run overwrites what the first run wrote. Two uses
 * defeat that and are refused at `output.gcs.object-name`, on every level:
 * - time tokens whose time is the clock (no `time-field`): a re-run writes new names;
 * - an input that reads no objects (http-poll): every name says `unknown-0`.
 * With `time-field` the time comes from the events and names repeat: that is accepted.
 */
import { describe, expect, it } from 'vitest';
import { renderJob } from '../../../shared/context/render.ts';
import { parseJobYaml, validateJob } from '../../../shared/job/index.ts';
import { hasTimeTokens } from '../../../shared/object-name-template.ts';
import { MINIMAL_GCS } from './helpers.ts';

const GCS_INPUT = { gcs: MINIMAL_GCS };
const POLL_INPUT = { 'http-poll': { url: 'https://example.org/s' } };
const LEVELS = ['saved', 'stored', 'rendered'] as const;

const job = (output: Record<string, unknown>, input: Record<string, unknown> = GCS_INPUT) => ({
  name: 'j',
  input,
  output: { gcs: { 'bucket-name': 'acme-archive', ...output } },
});

const CLOCK = {
  path: 'output.gcs.object-name',
  message: expect.stringMatching(/time-field.*drop the time tokens/),
};
const clockRefusal = expect.objectContaining(CLOCK);
const inputRefusal = expect.objectContaining({
  path: 'output.gcs.object-name',
  message: expect.stringMatching(/gcs input/),
});

describe('{source} with time tokens', () => {
  it('is refused when the time comes from the clock (no time-field), on every level', () => {
    for (const name of [
      'out/%H%M%S/{source}-{part}.ndjson',
      'out/%Y/%m/%d/{source}-{generation}-{part}.ndjson.gz',
      '{source}-%j-{part}',
      'out/100%%/%S-{source}-{part}',
    ]) {
      for (const level of LEVELS) {
        const result = validateJob(job({ 'object-name': name }), { level });
        expect(result.ok, `${name} ${level}`).toBe(false);
        if (!result.ok) expect(result.errors, `${name} ${level}`).toEqual([clockRefusal]);
      }
    }
  });

  it('names the tokens it found', () => {
    const result = validateJob(job({ 'object-name': 'out/%H%M/{source}-{part}' }), { level: 'rendered' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]!.message).toContain('%H %M');
  });

  it('is accepted when time-field gives the time (names repeat on a re-run)', () => {
    for (const level of LEVELS) {
      const result = validateJob(
        job({ 'object-name': 'out/%Y/%m/%d/%H/{source}-{part}.ndjson', 'time-field': 'ts' }),
        { level },
      );
      expect(result.ok, level).toBe(true);
    }
  });

  it('is accepted without time tokens: %% is a percent sign, not a time', () => {
    for (const name of [
      'out/{source}-{generation}-{part}',
      'out/100%%/{source}-{part}',
      'out/%%H-{source}-{part}',
    ]) {
      for (const level of LEVELS)
        expect(validateJob(job({ 'object-name': name }), { level }).ok, name).toBe(true);
    }
    expect(hasTimeTokens('a%%b')).toBe(false);
    expect(hasTimeTokens('a%%H')).toBe(false);
    expect(hasTimeTokens('a%%%H')).toBe(true);
  });

  it('without {source} time tokens from the clock are fine (every run writes names of its own)', () => {
    expect(validateJob(job({ 'object-name': 'logs/%Y/%m/%d/%H%M%S-{part}' }), { level: 'rendered' }).ok).toBe(
      true,
    );
  });

  it('a {{...}} reference that hides the tokens is refused when the job is rendered', () => {
    const definition = job({ 'object-name': '{{prefix}}/{source}-{part}.ndjson' });
    expect(validateJob(definition, { level: 'saved' }).ok).toBe(true);
    const rendered = renderJob(definition, { prefix: 'out/%H%M%S' });
    expect(rendered.ok).toBe(false);
    if (!rendered.ok) expect(rendered.errors).toEqual([clockRefusal]);
    expect(renderJob(definition, { prefix: 'out/static' }).ok).toBe(true);
    // The whole name from context, {source} included.
    const whole = job({ 'object-name': '{{name}}' });
    const wholeRendered = renderJob(whole, { name: 'out/%H/{source}-{part}' });
    expect(wholeRendered.ok).toBe(false);
    if (!wholeRendered.ok) expect(wholeRendered.errors).toEqual([clockRefusal]);
  });

  it('is refused by parseJobYaml at the line and column of object-name', () => {
    const parsed = parseJobYaml(
      'name: j\ninput:\n  gcs:\n    bucket-name: acme-logs\n    credentials:\n      storage-url: gs://acme-logs\n    object-names: []\noutput:\n  gcs:\n    bucket-name: acme-archive\n    object-name: out/%H%M%S/{source}-{part}.ndjson\n',
    );
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.errors).toEqual([{ ...CLOCK, line: 11, column: 18 }]);
  });
});

describe('{source} or {generation} with an input other than gcs', () => {
  it('is refused at object-name, on every level', () => {
    for (const name of ['out/{source}-{part}.ndjson', 'out/{source}-{generation}-{part}.ndjson']) {
      for (const level of LEVELS) {
        const result = validateJob(job({ 'object-name': name }, POLL_INPUT), { level });
        expect(result.ok, `${name} ${level}`).toBe(false);
        if (!result.ok) expect(result.errors, `${name} ${level}`).toEqual([inputRefusal]);
      }
    }
  });

  it('says what to do: drop the placeholders or read with a gcs input', () => {
    const result = validateJob(job({ 'object-name': 'out/{source}-{generation}-{part}' }, POLL_INPUT), {
      level: 'rendered',
    });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.errors[0]!.message).toContain('http-poll');
      expect(result.errors[0]!.message).toMatch(/drop \{source\} and \{generation\}/);
    }
  });

  it('is reported with the clock refusal when both apply', () => {
    const result = validateJob(job({ 'object-name': 'out/%H/{source}-{part}' }, POLL_INPUT), {
      level: 'rendered',
    });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors).toEqual(expect.arrayContaining([clockRefusal, inputRefusal]));
  });

  it('a {{...}} reference that brings {source} in is refused when the job is rendered', () => {
    const definition = job({ 'object-name': 'out/{{name}}' }, POLL_INPUT);
    expect(validateJob(definition, { level: 'saved' }).ok).toBe(true);
    const rendered = renderJob(definition, { name: '{source}-{part}' });
    expect(rendered.ok).toBe(false);
    if (!rendered.ok) expect(rendered.errors).toEqual([inputRefusal]);
  });

  it('accepts names without them, and a context reference named source', () => {
    for (const name of ['out/{part}.ndjson', 'out/%Y/%m/%d/{part}.ndjson', 'out/{{source}}-{part}.ndjson']) {
      expect(validateJob(job({ 'object-name': name }, POLL_INPUT), { level: 'saved' }).ok, name).toBe(true);
    }
  });
});
