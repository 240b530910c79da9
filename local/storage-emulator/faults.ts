/**
 * Fault injection and request counters, for tests of code that must survive a
 * flaky Cloud Storage: added latency, a share of 429/503 answers (deterministic
 * with a seed), objects that vanish between being listed and being downloaded, and
 * counts of list, metadata and download requests.
 */

export interface FaultConfig {
  latencyMs?: number;
  /** Share of requests (0..1) answered with `errorStatus` instead of being served. */
  errorRate?: number;
  errorStatus?: 400 | 403 | 429 | 500 | 503;
  /** Share of listed objects (0..1) deleted right after the listing answered with them. */
  deleteAfterListRate?: number;
  /**
   * How long a topic is not yet publishable after a notification config first names it, as
   * when a fresh topic or grant has not reached Cloud Storage: configs are refused meanwhile.
   */
  grantDelayMs?: number;
  seed?: number;
}

export interface RequestStats {
  list: number;
  metadata: number;
  download: number;
  upload: number;
  other: number;
  injectedErrors: number;
  /** Objects deleted by `deleteAfterListRate`. */
  deletedAfterList: number;
  bytesServed: number;
}

export type RequestKind = 'list' | 'metadata' | 'download' | 'upload' | 'other';

export class FaultInjector {
  private config: FaultConfig = {};
  private random = mulberry32(1);
  stats: RequestStats = emptyStats();

  configure(config: FaultConfig): void {
    this.config = { ...config };
    this.random = mulberry32(config.seed ?? 1);
  }

  resetStats(): void {
    this.stats = emptyStats();
  }

  /** Counts the request; returns a status to fail it with, or undefined to serve it. */
  async admit(kind: RequestKind): Promise<number | undefined> {
    this.stats[kind]++;
    if (this.config.latencyMs) await new Promise((r) => setTimeout(r, this.config.latencyMs));
    if (this.config.errorRate && this.random() < this.config.errorRate) {
      this.stats.injectedErrors++;
      return this.config.errorStatus ?? 503;
    }
    return undefined;
  }

  get grantDelayMs(): number {
    return this.config.grantDelayMs ?? 0;
  }

  /** The listed names to delete now, as if someone else removed them before the download. */
  vanishing(listed: string[]): string[] {
    const rate = this.config.deleteAfterListRate;
    if (!rate) return [];
    const chosen = listed.filter(() => this.random() < rate);
    this.stats.deletedAfterList += chosen.length;
    return chosen;
  }
}

function emptyStats(): RequestStats {
  return {
    list: 0,
    metadata: 0,
    download: 0,
    upload: 0,
    other: 0,
    injectedErrors: 0,
    deletedAfterList: 0,
    bytesServed: 0,
  };
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
