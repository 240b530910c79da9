/**
 * Counts of one run, reported in `job-run-ended` and `job-metrics`.
 *
 * @example
 *   const stats = newRunStats(); stats.skipped.excluded = (stats.skipped.excluded ?? 0) + 1;
 */
export interface RunStats {
  listed: number;
  list_requests: number;
  skipped: Record<string, number>;
  downloaded: number;
  download_requests: number;
  bytes: number;
  events: number;
  errors: number;
  failed_objects: number;
  fingerprinted: number;
  /**
   * Objects whose bytes are damaged part-way (a gzip cut short): their events up to the damage
   * were delivered, and they are done with until rewritten (reported as `damaged-object`).
   */
  damaged_objects?: number;
  /** Notifications received (inputs with `notifications` only). */
  notifications?: number;
  /**
   * Notified objects stamped before the run's window, read by this run: the run of their
   * window did not receive their notifications (windowed inputs with `notifications` only).
   */
  late?: number;
  /** Objects handed to other runners, and in how many parts (a sharded run on `cloud` only). */
  sharded_objects?: number;
  shards?: number;
}

export function newRunStats(): RunStats {
  return {
    listed: 0,
    list_requests: 0,
    skipped: {},
    downloaded: 0,
    download_requests: 0,
    bytes: 0,
    events: 0,
    errors: 0,
    failed_objects: 0,
    fingerprinted: 0,
  };
}

export function countSkip(stats: RunStats, reason: string): void {
  stats.skipped[reason] = (stats.skipped[reason] ?? 0) + 1;
}
