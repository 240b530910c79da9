/**
 * Runtime configuration, read once from the environment. Every knob has a
 * default that works in the local stack; the cloud deployment sets them in terraform.
 */

import { PART_MAX_OBJECTS } from '../../shared/runs/part-limits.ts';
import { parseEgressAllow } from '../runner/egress/policy.ts';

export interface AppConfig {
  /** Google Cloud project id (`demo-*` ids never leave the emulators). */
  projectId: string;
  /** `iss` of the tokens we sign and the only issuer we accept. */
  tokenIssuer: string;
  /** `aud` of the tokens we sign and the only audience we accept. */
  tokenAudience: string;
  defaultTokenTtl: string;
  maxTokenTtl: string;
  /** Base64 32-byte key for secrets at rest (AES-256-GCM); from Secret Manager in the cloud. */
  secretsKey: string | undefined;
  /** Heartbeat interval workers are told to use; 3 missed intervals mean `offline`. */
  heartbeatInterval: string;
  /** The local stack's 0600 signing key file; absent in the cloud (SLUICE_SIGNING_KEY) and in test apps (Firestore). */
  signingKeyFile?: string;
  /**
   * CIDRs (SLUICE_EGRESS_ALLOW) the `cloud` worker's jobs may connect to among loopback and
   * private ranges; link-local and metadata addresses are refused whatever this says. Empty
   * in the cloud; the local stack allows loopback so that jobs can reach local test servers.
   */
  egressAllow: string[];
  /** Longest one run may take on the `cloud` worker within a tick (SLUICE_CLOUD_RUN_BUDGET). */
  cloudRunBudget: string;
  /** Runs of one tenant's `cloud` jobs at once across every runner (SLUICE_TENANT_RUN_CAP). */
  tenantRunCap: number;
  /**
   * How long a `cloud` job's lease lasts unrenewed (SLUICE_RUN_LEASE): how soon after its
   * runner died a job can run again. Renewed every third of it while the run goes on.
   */
  runLease: string;
  /**
   * A `cloud` run that finds more objects to read than this reads that many and hands the
   * rest to other runners, as many at a time (SLUICE_SHARD_OBJECTS, 1 to SHARD_OBJECTS_MAX).
   */
  shardObjects: number;
  /**
   * The local stack's runners (SLUICE_RUN_RETRY_BACKOFF): how long a run request that failed
   * waits before it comes back, doubling with each delivery up to 10 minutes, as the cloud's
   * retry policy does (terraform/runs.tf). Tests make it 0 s.
   */
  runRetryBackoff: string;
  /**
   * How many proxies in front of us append to X-Forwarded-For and are trusted: 0 (the
   * local stack, nothing in front) ignores the header; 1 behind Google's load balancer,
   * which appends `<client>, <balancer>`. Whatever stands before those entries is forged.
   */
  trustedProxyHops: number;
}

/**
 * The largest SLUICE_SHARD_OBJECTS: the objects one part request may carry. A larger value
 * would make parts the runners refuse.
 */
export const SHARD_OBJECTS_MAX = PART_MAX_OBJECTS;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const projectId = env.SLUICE_PROJECT_ID ?? env.GOOGLE_CLOUD_PROJECT ?? env.GCLOUD_PROJECT ?? 'demo-sluice';
  return {
    projectId,
    tokenIssuer: env.SLUICE_TOKEN_ISSUER ?? 'sluice',
    tokenAudience: env.SLUICE_TOKEN_AUDIENCE ?? 'sluice-api',
    defaultTokenTtl: env.SLUICE_TOKEN_DEFAULT_TTL ?? '30m',
    maxTokenTtl: env.SLUICE_TOKEN_MAX_TTL ?? '24h',
    secretsKey: env.SLUICE_SECRETS_KEY,
    heartbeatInterval: env.SLUICE_HEARTBEAT_INTERVAL ?? '10s',
    egressAllow: parseEgressAllow(env.SLUICE_EGRESS_ALLOW, []),
    cloudRunBudget: env.SLUICE_CLOUD_RUN_BUDGET || '60s',
    tenantRunCap: wholeNumber('SLUICE_TENANT_RUN_CAP', env.SLUICE_TENANT_RUN_CAP, 4),
    runLease: env.SLUICE_RUN_LEASE || '15s',
    shardObjects: wholeNumber('SLUICE_SHARD_OBJECTS', env.SLUICE_SHARD_OBJECTS, 1000, SHARD_OBJECTS_MAX),
    runRetryBackoff: env.SLUICE_RUN_RETRY_BACKOFF || '10s',
    trustedProxyHops: proxyHops(env.SLUICE_TRUSTED_PROXY_HOPS),
  };
}

function proxyHops(value: string | undefined): number {
  if (value === undefined || value === '') return 0;
  if (!/^\d{1,2}$/.test(value)) {
    throw new Error(`SLUICE_TRUSTED_PROXY_HOPS must be a small whole number (0 or 1), got "${value}"`);
  }
  return Number(value);
}

function wholeNumber(name: string, value: string | undefined, fallback: number, max?: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^[1-9]\d{0,5}$/.test(value) || (max !== undefined && Number(value) > max)) {
    const range = max === undefined ? 'of at least 1' : `from 1 to ${max}`;
    throw new Error(`${name} must be a whole number ${range}, got "${value}"`);
  }
  return Number(value);
}
