/**
 * Context resolution with provenance: for each key, the highest scope that sets it
 * wins: job overrides, worker overrides, global defaults, then the job definition's
 * `context:` block; `job` and `worker` are built in.
 *
 * @example
 *   resolveContext({ job: 'j', worker: 'w1', definition: { t: '10m' }, global: { t: '5m' }, workerMap: { t: '30m' }, jobMap: {} });
 *   // { context: { t: '30m', job: 'j', worker: 'w1' }, sources: { t: 'worker', job: 'builtin', worker: 'builtin' } }
 */
import type { ContextMap, JsonValue } from './map.ts';

export type ContextSource = 'job' | 'worker' | 'global' | 'definition' | 'builtin';

export interface ContextLayers {
  job: string;
  worker: string;
  jobMap: ContextMap;
  workerMap: ContextMap;
  global: ContextMap;
  definition: ContextMap;
}

export interface ResolvedContext {
  context: Record<string, JsonValue>;
  sources: Record<string, ContextSource>;
}

export function resolveContext(layers: ContextLayers): ResolvedContext {
  // Maps, then own properties (fromEntries): a key such as `__proto__` from a local
  // `--context` can only ever be a key, never replace the object's prototype.
  const context = new Map<string, JsonValue>();
  const sources = new Map<string, ContextSource>();
  const apply = (map: ContextMap, source: ContextSource) => {
    for (const [key, value] of Object.entries(map)) {
      context.set(key, value);
      sources.set(key, source);
    }
  };
  // Lowest precedence first; later layers overwrite.
  apply(layers.definition, 'definition');
  apply(layers.global, 'global');
  apply(layers.workerMap, 'worker');
  apply(layers.jobMap, 'job');
  context.set('job', layers.job);
  context.set('worker', layers.worker);
  sources.set('job', 'builtin');
  sources.set('worker', 'builtin');
  return { context: Object.fromEntries(context), sources: Object.fromEntries(sources) };
}
