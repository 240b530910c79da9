/**
 * Who is calling: the verified identity a token (or session cookie) stands for.
 * Produced by the auth middleware in `functions/auth/`, consumed by every route.
 */

export const ROLES = ['admin', 'operator', 'viewer', 'worker'] as const;
export type Role = (typeof ROLES)[number];

export const PRINCIPAL_KINDS = ['user', 'api-key', 'worker'] as const;
export type PrincipalKind = (typeof PRINCIPAL_KINDS)[number];

export interface Principal {
  /** Username, API key id or worker id. */
  subject: string;
  kind: PrincipalKind;
  tenant: string;
  roles: Role[];
  /** True for the bootstrap admin, who may act on tenants and users everywhere. */
  systemAdmin: boolean;
  /** The credential the token was issued from; revoking it revokes the token. */
  credentialRef: string;
  tokenId: string;
  issuedAt: Date;
  expiresAt: Date;
}
