/**
 * JSON lines go to `print` as read, with the metadata fields spliced in: the text must be
 * exactly what serializing the event would give, field for field.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createPrintOutput } from '../../outputs/print/index.ts';
import type { RunEvent } from '../../types.ts';
import { eventShaper } from './fields.ts';
import type { ObjectMeta } from './list.ts';

const meta: ObjectMeta = { bucket: 'b', name: 'logs/a "1".json', generation: '7', size: 42 };

async function printed(events: RunEvent[]): Promise<string[]> {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk) => {
    text += chunk;
  });
  await createPrintOutput(stream).write(events);
  return text.split('\n').filter(Boolean);
}

function shaped(lines: string[], fields: Record<string, string>, dataField?: string): RunEvent[] {
  const shape = eventShaper({ fields, ...(dataField ? { dataField } : {}) }, meta);
  return lines.map((line) => shape.fromJsonObject(JSON.parse(line), line));
}

describe('JSON lines printed as read', () => {
  it('keeps the line and splices the metadata fields in, escaped', async () => {
    const lines = ['{"a":1,"b":"x"}', '{ "a" : 2 }  ', '{}', '{"nested":{"c":[1,2]}}'];
    const events = shaped(lines, { objectName: 'object', contentLength: 'size' });
    expect(await printed(events)).toEqual([
      '{"a":1,"b":"x","object":"logs/a \\"1\\".json","size":42}',
      '{ "a" : 2 ,"object":"logs/a \\"1\\".json","size":42}',
      '{"object":"logs/a \\"1\\".json","size":42}',
      '{"nested":{"c":[1,2]},"object":"logs/a \\"1\\".json","size":42}',
    ]);
    // The same events as objects: what any other consumer sees.
    expect(events[1]).toEqual({ a: 2, object: 'logs/a "1".json', size: 42 });
    expect((await printed(events)).map((line) => JSON.parse(line))).toEqual(events);
  });

  it('without metadata fields, prints the line unchanged', async () => {
    expect(await printed(shaped(['{"a":1.50,"é":"\\u00e9"}'], {}))).toEqual(['{"a":1.50,"é":"\\u00e9"}']);
  });

  it('a data field named like a metadata field: serialized again, the metadata wins, no duplicate key', async () => {
    const events = shaped(['{"object":"from data","a":1}'], { objectName: 'object' });
    expect(await printed(events)).toEqual(['{"object":"logs/a \\"1\\".json","a":1}']);
  });

  it('with data-field the event is built and serialized as before', async () => {
    const events = shaped(['{"a":1}'], { objectName: 'object' }, 'data');
    expect(await printed(events)).toEqual(['{"data":{"a":1},"object":"logs/a \\"1\\".json"}']);
  });
});
