/**
 * Runtime configuration, read once from the environment. Every knob has a
 * default that works in the local stack; the cloud deployment sets them in terraform.
 */

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
}

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
  };
}
