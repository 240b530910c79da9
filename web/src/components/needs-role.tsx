/**
 * Stands in for what the signed-in user's roles do not allow (an editor the API would
 * refuse): says which role it needs, so nothing looks usable that is not.
 *
 * @example
 *   {admin ? <ContextEditor … /> : <NeedsRole needs="admin">Changing worker overrides</NeedsRole>}
 */
import type { ComponentChildren } from 'preact';
import type { Role } from '../../../shared/auth/principal.ts';
import { useIdentity } from '../lib/identity.ts';

export function NeedsRole({ needs, children }: { needs: Role; children: ComponentChildren }) {
  const me = useIdentity();
  const held = me?.roles.length ? me.roles.join(', ') : 'no role';
  return (
    <p class="needs-role" data-needs-role={needs}>
      {children} needs the <strong>{needs}</strong> role (you have {held}).
    </p>
  );
}
