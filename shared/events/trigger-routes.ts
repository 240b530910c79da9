/**
 * Which events a worker's message triggers can match, as the control plane routes them.
 * Every event the platform records is a candidate for `message` triggers of the same
 * tenant; a worker is sent only the events some trigger deployed to it can match, so
 * fan-out costs one message per interested worker, not one per worker.
 *
 * A route keeps the filters of the staged definition. A filter value that comes from a
 * context (`{{...}}`) may render differently per worker and change later: routing treats
 * it as matching anything, and the worker's own trigger applies the rendered value. Routing
 * may over-deliver, never under-deliver.
 *
 * @example
 *   const filters = messageFiltersOf(definition);   // [{ 'filter-type': ['job-run-ended'], 'filter-job': 'a' }]
 *   routeMatches(filters, event);                   // true for a job-run-ended of job a
 */
import { type MessageFilter, matchesMessageFilter } from './filter.ts';
import { kindOf, type SluiceEvent } from './vocabulary.ts';

const FILTER_KEYS = [
  'filter-kind',
  'filter-source',
  'filter-worker',
  'filter-job',
  'filter-type',
  'filter-tag',
] as const satisfies readonly (keyof MessageFilter)[];

/** The message-trigger filters of a definition's inputs, templated values left out. */
export function messageFiltersOf(definition: { input?: unknown }): MessageFilter[] {
  const inputs = (definition.input ?? {}) as Record<
    string,
    { trigger?: { message?: Record<string, unknown> } }
  >;
  const filters: MessageFilter[] = [];
  for (const input of Object.values(inputs)) {
    const message = input?.trigger?.message;
    if (!message || typeof message !== 'object') continue;
    const filter: Record<string, unknown> = {};
    for (const key of FILTER_KEYS) {
      const value = message[key];
      if (value !== undefined && !templated(value)) filter[key] = value;
    }
    filters.push(filter as MessageFilter);
  }
  return filters;
}

export function routeMatches(filters: readonly MessageFilter[], event: SluiceEvent): boolean {
  return filters.some((filter) => matchesMessageFilter(filter, event));
}

/**
 * Messages the control plane already sends to workers by address (user messages to their
 * audience, context changes of the global and worker maps): routing them again would
 * deliver them twice.
 */
export function sentByAddress(event: SluiceEvent): boolean {
  if (kindOf(event.type) === 'user') return true;
  return event.type === 'context-changed' && (event.payload as { scope?: string }).scope !== 'job';
}

function templated(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('{{');
  return Array.isArray(value) && value.some(templated);
}
