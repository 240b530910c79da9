/** A context value shown with its JSON type: strings quoted, objects and arrays as compact JSON. */
import type { JsonValue } from '../api.ts';
import { typeName } from '../lib/typed-value.ts';

export function TypeBadge({ value }: { value: JsonValue }) {
  const t = typeName(value);
  return <span class={`type type-${t}`}>{t}</span>;
}

export function ValueView({ value }: { value: JsonValue }) {
  if (typeof value === 'string') return <code class="value value-string">"{value}"</code>;
  if (value !== null && typeof value === 'object') {
    const text = JSON.stringify(value);
    return text.length > 80 ? (
      <details class="value">
        <summary>
          <code>{text.slice(0, 72)}…</code>
        </summary>
        <pre>{JSON.stringify(value, null, 2)}</pre>
      </details>
    ) : (
      <code class="value value-json">{text}</code>
    );
  }
  return <code class={`value value-${typeName(value)}`}>{String(value)}</code>;
}

/** The key, type and value cells of one context entry, as every context table shows them. */
export function ContextEntryCells({ name, value }: { name: string; value: JsonValue }) {
  return (
    <>
      <th scope="row">
        <code>{name}</code>
      </th>
      <td>
        <TypeBadge value={value} />
      </td>
      <td>
        <ValueView value={value} />
      </td>
    </>
  );
}
