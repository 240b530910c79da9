/**
 * A job's actions as lines a person reads at a glance: the kind, then what it does, in the
 * order they apply to each event. Pure, so it is tested without a browser.
 *
 * @example
 *   actionLines({ actions: [{ filter: "event.level == 'error'" }, { rename: { msg: 'message' } }] })
 *   // [{ kind: 'filter', text: "event.level == 'error'" }, { kind: 'rename', text: 'msg → message' }]
 */
export interface ActionLine {
  kind: string;
  text: string;
}

export function actionLines(definition: unknown): ActionLine[] {
  const actions = (definition as { actions?: unknown } | null | undefined)?.actions;
  if (!Array.isArray(actions)) return [];
  return actions.flatMap((action) => {
    const entry = Object.entries((action ?? {}) as Record<string, unknown>)[0];
    return entry ? [{ kind: entry[0], text: describe(entry[0], entry[1]) }] : [];
  });
}

function describe(kind: string, spec: unknown): string {
  switch (kind) {
    case 'filter':
    case 'parse-json':
      return String(spec);
    case 'set':
      return pairs(spec, ' = ');
    case 'rename':
      return pairs(spec, ' → ');
    case 'remove':
    case 'keep':
      return Array.isArray(spec) ? spec.join(', ') : String(spec);
    case 'parse-timestamp': {
      const { field, format } = (spec ?? {}) as { field?: string; format?: string };
      return format ? `${field} (${format})` : String(field);
    }
    default:
      return JSON.stringify(spec);
  }
}

function pairs(spec: unknown, joiner: string): string {
  return Object.entries((spec ?? {}) as Record<string, unknown>)
    .map(([key, value]) => `${key}${joiner}${String(value)}`)
    .join('; ');
}
