/**
 * The API's service account must not hold a project-wide Pub/Sub role: with
 * roles/pubsub.editor, whoever takes the API over could delete or rewire every topic and
 * subscription in the project. `npm run check:deploy` holds terraform to the narrow grants.
 */
import { describe, expect, it } from 'vitest';
import {
  checkApiPubsub,
  loadTerraform,
  runDeployChecks,
  type Terraform,
} from '../../scripts/check-deploy.ts';

const API = 'serviceAccount:${google_service_account.api.email}';

async function terraform(change: (tf: Terraform) => void = () => {}): Promise<Terraform> {
  const tf = await loadTerraform();
  change(tf);
  return tf;
}

describe("check:deploy on the API's Pub/Sub rights", () => {
  it('passes on the repository: no project-wide Pub/Sub role, only the two narrow custom roles', async () => {
    const tf = await terraform();
    expect(checkApiPubsub(tf)).toMatchObject({ ok: true, problems: [] });
    expect(tf.locals.project_roles.api.roles.join(' ')).not.toMatch(/pubsub/);
    const results = await runDeployChecks({ terraformCli: false });
    expect(results.find((r) => r.name.includes('Pub/Sub'))).toMatchObject({ ok: true });
    // Every deploy check of the repository: past the default timeout on a busy machine.
  }, 60_000);

  it('fails when the API gets roles/pubsub.editor back, through project_roles or a binding of its own', async () => {
    const viaLocals = checkApiPubsub(
      await terraform((tf) => tf.locals.project_roles.api.roles.push('roles/pubsub.editor')),
    );
    expect(viaLocals.ok).toBe(false);
    expect(viaLocals.problems.join('\n')).toContain('roles/pubsub.editor');
    const viaBinding = checkApiPubsub(
      await terraform((tf) => {
        tf.resource.google_project_iam_member.sneaky = [{ member: API, role: 'roles/pubsub.admin' }];
      }),
    );
    expect(viaBinding.problems.join('\n')).toContain('google_project_iam_member.sneaky');
  });

  it('fails when a custom role gains a permission, or a grant is missing or on the wrong topic', async () => {
    const wider = checkApiPubsub(
      await terraform((tf) =>
        tf.resource.google_project_iam_custom_role.api_worker_subscriptions[0].permissions.push(
          'pubsub.subscriptions.update',
        ),
      ),
    );
    expect(wider.problems.join('\n')).toContain('pubsub.subscriptions.update');
    const noTopicGrant = checkApiPubsub(
      await terraform((tf) => delete tf.resource.google_pubsub_topic_iam_member.api_worker_topic),
    );
    expect(noTopicGrant.problems.join('\n')).toContain('api_worker_topic');
    const wrongTopic = checkApiPubsub(
      await terraform((tf) => {
        tf.resource.google_pubsub_topic_iam_member.api_worker_topic[0].topic =
          '${google_pubsub_topic.dead_letters.name}';
      }),
    );
    expect(wrongTopic.problems.join('\n')).toContain('not the worker topic');
    const noSubscriptions = checkApiPubsub(
      await terraform((tf) => delete tf.resource.google_project_iam_member.api_worker_subscriptions),
    );
    expect(noSubscriptions.problems.join('\n')).toContain('api_worker_subscriptions');
  });
});
