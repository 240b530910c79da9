import { describe, expect, it } from 'vitest';
import { checkWebUi, loadTerraform } from '../../scripts/check-deploy.ts';

describe('check:deploy for the web UI', () => {
  it('passes on terraform/ as it is', async () => {
    expect((await checkWebUi(await loadTerraform())).problems).toEqual([]);
  });

  it('fails when a page is missing from the bucket or the CSP drifts from the local stack', async () => {
    const tf = await loadTerraform();
    tf.locals.web_pages = tf.locals.web_pages.filter((p: string) => p !== 'events');
    tf.locals.web_csp = 'default-src *';
    const { problems } = await checkWebUi(tf);
    expect(problems).toEqual([
      '/events is not in local.web_pages of terraform/ui.tf',
      'local.web_csp in terraform/ui.tf differs from CONTENT_SECURITY_POLICY in web/serve.ts',
    ]);
  });

  it('fails when a page would reach a function instead of the bucket', async () => {
    const tf = await loadTerraform();
    tf.locals.functions = { ...tf.locals.functions, jobs: { kind: 'http', paths: ['/jobs/*', '/api/jobs'] } };
    const matcher = tf.resource.google_compute_url_map.api[0].path_matcher[0];
    matcher.path_rule = [];
    const { problems } = await checkWebUi(tf);
    expect(problems).toContain('/jobs/x (a web UI page) reaches the function jobs');
    expect(problems).toContain('/api/docs needs a path rule to the web UI bucket');
  });
});
