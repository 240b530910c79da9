/**
 * Creates the system admin `admin` in a deployed project, from an operator's machine
 * (the cloud has no `npm start` to do it). Reads the password from stdin; does nothing
 * when any user exists. Uses Application Default Credentials for Firestore.
 *
 * @example
 *   printf '%s' "$ADMIN_PASSWORD" | GOOGLE_CLOUD_PROJECT=my-project npx tsx functions/entry/bootstrap-admin.ts
 */
import { text } from 'node:stream/consumers';
import { bootstrapAdmin } from '../identity/bootstrap.ts';
import { cloudDeps } from './http-function.ts';

const password = (await text(process.stdin)).replace(/\r?\n$/, '');
if (!password) {
  console.error('bootstrap-admin: give the password on stdin');
  process.exit(2);
}
const deps = cloudDeps();
try {
  const result = await bootstrapAdmin(deps, { password });
  console.log(
    result.created
      ? `created the system admin \`admin\` in project ${deps.config.projectId}`
      : `users already exist in project ${deps.config.projectId}: nothing done`,
  );
} catch (err) {
  console.error(`bootstrap-admin: ${(err as Error).message}`);
  process.exitCode = 1;
} finally {
  await deps.clients.close();
}
