/**
 * Parquet logical types that Arrow's schema does not keep (parquet-wasm hands JSON over
 * as plain text, UUIDs and geometries as plain bytes): read from the file's own schema
 * (hyparquet parses the footer), they give a conversion per top-level column, applied
 * after arrow-rows' own. JSON text is parsed (kept as text when it does not parse),
 * UUIDs become 8-4-4-4-12 hex, GEOMETRY and GEOGRAPHY (WKB) become GeoJSON.
 *
 * @example
 *   const fixes = await logicalTypeFixes((await parquetMetadataAsync(file)).schema);
 *   batchRows(arrow, batch, 0, batch.numRows, fixes);
 */
import type { SchemaElement } from 'hyparquet';
import type { ColumnFixes } from './arrow-rows.ts';

export async function logicalTypeFixes(schema: SchemaElement[]): Promise<ColumnFixes> {
  const fixes = new Map<string, (value: unknown) => unknown>();
  let at = 1;
  for (let c = 0; c < (schema[0]?.num_children ?? 0); c++) {
    const element = schema[at]!;
    const type = element.logical_type?.type;
    if (element.converted_type === 'JSON' || type === 'JSON') fixes.set(element.name, parseJson);
    else if (type === 'UUID') fixes.set(element.name, uuidText);
    else if (type === 'GEOMETRY' || type === 'GEOGRAPHY') fixes.set(element.name, await geoJson());
    at = afterSubtree(schema, at);
  }
  return fixes;
}

/** Index of the element after `at` and all its descendants (the schema is a flattened tree). */
function afterSubtree(schema: SchemaElement[], at: number): number {
  let next = at + 1;
  for (let c = 0; c < (schema[at]?.num_children ?? 0); c++) next = afterSubtree(schema, next);
  return next;
}

function parseJson(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** arrow-rows gives bytes as base64. */
function uuidText(base64: unknown): unknown {
  if (typeof base64 !== 'string') return base64;
  const hex = Buffer.from(base64, 'base64').toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** hyparquet's WKB decoder, loaded only for files with a geometry column. */
async function geoJson(): Promise<(base64: unknown) => unknown> {
  const { wkbToGeojson } = await import('hyparquet/src/wkb.js');
  return (base64) => {
    if (typeof base64 !== 'string') return base64;
    const bytes = Buffer.from(base64, 'base64');
    return wkbToGeojson({ view: new DataView(bytes.buffer, bytes.byteOffset, bytes.length), offset: 0 });
  };
}
