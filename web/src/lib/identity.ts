/**
 * The signed-in user (`GET /api/auth/me`) for every page under the app shell, so a page
 * leaves out what the user's roles would have the API refuse.
 *
 * @example
 *   const admin = useCan('admin');
 *   {admin ? <ContextEditor … /> : <p class="hint">Context overrides need the admin role.</p>}
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Role } from '../../../shared/auth/principal.ts';
import { can } from './roles.ts';
import type { Identity } from './types.ts';

export const IdentityContext = createContext<Identity | null>(null);

export function useIdentity(): Identity | null {
  return useContext(IdentityContext);
}

export function useCan(role: Role): boolean {
  return can(useContext(IdentityContext), role);
}
