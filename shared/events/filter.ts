/**
 * The seed's `message` trigger filters: does a message (an event) match them?
 * Every filter given must match; `filter-tag` matches user-generated messages only.
 *
 * @example
 *   matchesMessageFilter({ 'filter-type': ['user-generated'], 'filter-tag': 'nightly' }, event);
 */
import type { SluiceEvent } from './vocabulary.ts';

export interface MessageFilter {
  'filter-kind'?: string;
  'filter-source'?: string[];
  'filter-worker'?: string;
  'filter-job'?: string;
  'filter-type'?: string[];
  'filter-tag'?: string;
}

export function matchesMessageFilter(
  filter: MessageFilter,
  event: Pick<SluiceEvent, 'type' | 'kind' | 'source' | 'worker' | 'job' | 'tags'>,
): boolean {
  if (filter['filter-kind'] !== undefined && event.kind !== filter['filter-kind']) return false;
  if (filter['filter-source'] && !filter['filter-source'].includes(event.source)) return false;
  if (filter['filter-worker'] !== undefined && event.worker !== filter['filter-worker']) return false;
  if (filter['filter-job'] !== undefined && event.job !== filter['filter-job']) return false;
  if (filter['filter-type'] && !filter['filter-type'].includes(event.type)) return false;
  if (filter['filter-tag'] !== undefined) {
    if (event.type !== 'user-generated' || !(event.tags ?? []).includes(filter['filter-tag'])) return false;
  }
  return true;
}
