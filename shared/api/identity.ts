/**
 * The shapes of who a caller is (`GET /api/auth/me`) and of a token (`POST /api/tokens/...`),
 * declared once for the routes, the web UI and the CLI.
 */
import { z } from 'zod';

export const Identity = z.object({
  subject: z.string(),
  kind: z.enum(['user', 'api-key', 'worker']),
  tenant: z.string(),
  roles: z.array(z.string()),
  issued_at: z.string(),
  expires_at: z.string(),
});

export const TokenResponse = z.object({
  token: z.string(),
  token_type: z.literal('Bearer'),
  expires_at: z.string(),
  expires_in: z.number().int().describe('Seconds until expiry'),
  tenant: z.string(),
  roles: z.array(z.string()),
});

export type Identity = z.infer<typeof Identity>;
export type TokenResponse = z.infer<typeof TokenResponse>;
