/**
 * Single-use tickets that open the worker stream (`GET /api/worker/stream?ticket=...`).
 * An EventSource cannot send an Authorization header, and a token in a URL lands in the
 * load balancer's and Cloud Run's request logs; a ticket there is worth nothing once used
 * or after TICKET_TTL_MS. A worker gets one with its bearer token
 * (`POST /api/worker/stream-ticket`). Stored as `stream-tickets/{sha256(ticket)}` (the
 * ticket itself never is), with `expires_at` for a TTL policy; consumed in a transaction,
 * so two requests with one ticket open one stream.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Firestore } from '@google-cloud/firestore';
import type { Principal } from '../../shared/auth/principal.ts';
import { rootCollection } from '../adapters/firestore-paths.ts';
import type { TokenClaims } from '../auth/services.ts';

export const TICKET_TTL_MS = 30_000;

/** What the ticket stands for: the claims of the token it was issued to, and when that token ends. */
export interface StreamGrant {
  claims: TokenClaims;
  tokenExpiresAt: number;
}

interface TicketRecord {
  sub: string;
  kind: TokenClaims['kind'];
  tenant: string;
  roles: TokenClaims['roles'];
  cred: string;
  token_expires_at: number;
  expires_at: Date;
}

const ticketRef = (db: Firestore, ticket: string) =>
  rootCollection(db, 'stream-tickets').doc(createHash('sha256').update(ticket).digest('hex'));

export async function issueStreamTicket(
  db: Firestore,
  principal: Principal,
): Promise<{ ticket: string; expiresAt: Date }> {
  const ticket = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Math.min(Date.now() + TICKET_TTL_MS, principal.expiresAt.getTime()));
  const record: TicketRecord = {
    sub: principal.subject,
    kind: principal.kind,
    tenant: principal.tenant,
    roles: principal.roles,
    cred: principal.credentialRef,
    token_expires_at: principal.expiresAt.getTime(),
    expires_at: expiresAt,
  };
  await ticketRef(db, ticket).create(record);
  return { ticket, expiresAt };
}

/** The grant of a valid, unused ticket, which is used up by this; undefined otherwise. */
export async function consumeStreamTicket(db: Firestore, ticket: string): Promise<StreamGrant | undefined> {
  const ref = ticketRef(db, ticket);
  const record = await db.runTransaction(async (tx) => {
    const found = (await tx.get(ref)).data() as
      | (Omit<TicketRecord, 'expires_at'> & { expires_at: { toMillis(): number } })
      | undefined;
    if (found) tx.delete(ref);
    return found;
  });
  if (!record || record.expires_at.toMillis() <= Date.now()) return undefined;
  const { sub, kind, tenant, roles, cred } = record;
  return { claims: { sub, kind, tenant, roles, cred }, tokenExpiresAt: record.token_expires_at };
}
