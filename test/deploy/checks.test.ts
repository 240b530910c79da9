/**
 * `npm run check:deploy` as a test: the code, terraform/ and firebase.json agree; and
 * each check really fails on the mistakes it is there to catch.
 */
import { parse as parseHcl } from '@cdktf/hcl2json';
import { describe, expect, it } from 'vitest';
import {
  checkCollections,
  checkFirebase,
  checkRoles,
  checkRunQueue,
  checkTtl,
  findQueries,
  loadTerraform,
  missingIndexes,
  routeFor,
  runDeployChecks,
  type Terraform,
} from '../../scripts/check-deploy.ts';

describe('check:deploy', () => {
  it('passes on the repository as it is', async () => {
    const results = await runDeployChecks();
    const failures = results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.problems.join('; ')}`);
    expect(failures).toEqual([]);
    expect(results.map((r) => r.name)).toContain(
      'TTL policy on fingerprints.expires_at, rate-limit-failures.expires_at, events.expires_at, stream-tickets.expires_at, runs.expires_at, parked-runs.expires_at',
    );
  }, 60_000);

  it('asks for a composite index when a query filters and sorts on different fields', async () => {
    const tf = await loadTerraform();
    const source = `
      export async function list(db, tenant, job) {
        let q = eventsCollection(db, tenant).where('job', '==', job);
        q = q.where('kind', '==', 'user').orderBy('id');
        return q.get();
      }`;
    const helpers = new Map([['eventsCollection', 'events']]);
    const queries = findQueries('events.ts', source, helpers);
    expect(queries).toEqual([
      expect.objectContaining({ collection: 'events', equality: ['job', 'kind'], sort: ['id'] }),
    ]);
    const problems = missingIndexes(queries, tf);
    expect(problems).toHaveLength(1); // (job, id) exists; (kind, id) does not
    expect(problems[0]).toContain('(kind, id)');
  });

  it('asks for a descending index for a query that sorts newest first, and both for a direction chosen at run time', async () => {
    const tf = await loadTerraform();
    const source = `
      function f(db, t, job, newest) { return eventsCollection(db, t).where('job', '==', job).orderBy('id', newest ? 'desc' : 'asc').get(); }
      function g(db, t, kind) { return eventsCollection(db, t).where('kind', '==', kind).orderBy('id', 'desc').get(); }`;
    const queries = findQueries('x.ts', source, new Map([['eventsCollection', 'events']]));
    expect(queries.map((q) => q.directions)).toEqual([['either'], ['desc']]);
    // terraform has (job, id) both ways; nothing on kind.
    expect(missingIndexes(queries, tf)).toEqual([expect.stringContaining('(kind, id desc)')]);
    delete (tf.locals.composite_indexes as Record<string, unknown>).events_job_id_desc;
    expect(missingIndexes(queries, tf)).toEqual([
      expect.stringContaining('(job, id desc)'),
      expect.stringContaining('(kind, id desc)'),
    ]);
  });

  it('reads the sort fields of a chained query in the order they sort', async () => {
    const tf = await loadTerraform();
    const source = `function f(db) { return db.collection('workers').orderBy('created_at').orderBy('id').get(); }
      function g(db) { return db.collection('workers').orderBy('id').orderBy('created_at').get(); }`;
    const queries = findQueries('x.ts', source, new Map());
    expect(queries.map((q) => q.sort)).toEqual([
      ['created_at', 'id'],
      ['id', 'created_at'],
    ]);
    // terraform has (created_at, id) for workers: only the second query lacks its index.
    const problems = missingIndexes(queries, tf);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('(id, created_at)');
  });

  it('needs no composite index for equality-only or single-field queries', async () => {
    const tf = await loadTerraform();
    const source = `function f(db) { return db.collection('users').where('a', '==', 1).where('b', '==', 2).get(); }
      function g(db) { return db.collection('users').orderBy('created_at').get(); }`;
    expect(missingIndexes(findQueries('x.ts', source, new Map()), tf)).toEqual([]);
  });

  it('asks for a collection-group index for a collection-group query', async () => {
    const tf = await loadTerraform();
    const source = `function f(db) { return db.collectionGroup('jobs').where('state', '==', 'running').get(); }`;
    expect(missingIndexes(findQueries('x.ts', source, new Map()), tf)).toEqual([
      expect.stringContaining('collection-group query on "state"'),
    ]);
  });

  it('finds the collection of a query built through firestore-paths.ts, also for collection groups', () => {
    const source = `
      function jobs(db, tenant) { return tenantCollection(db, tenant, 'jobs'); }
      function byName(db, t) { return jobs(db, t).orderBy('name').get(); }
      function stale(db) { return collectionGroup(db, 'outbox').where('created_at', '<', 1).get(); }`;
    const helpers = new Map<string, string>([['jobs', 'jobs']]);
    expect(findQueries('x.ts', source, helpers)).toEqual([
      expect.objectContaining({ collection: 'jobs', collectionGroup: false, sort: ['name'] }),
      expect.objectContaining({ collection: 'outbox', collectionGroup: true, sort: ['created_at'] }),
    ]);
  });

  it('refuses terraform settings and queries on collections firestore-paths.ts does not declare', async () => {
    const tf = await loadTerraform();
    (tf.locals.collection_group_fields as Record<string, unknown>).renamed = {
      collection: 'job',
      field: 'x',
    };
    const source = `function f(db) { return db.collection('evnets').orderBy('id').get(); }`;
    expect(checkCollections(tf, findQueries('x.ts', source, new Map())).problems).toEqual([
      'terraform/firestore.tf: local.collection_group_fields on "job", which firestore-paths.ts does not declare',
      'x.ts:1: a query on "evnets", which firestore-paths.ts does not declare',
    ]);
  });

  it('asks for the TTL policy of every collection the code gives an expiry', async () => {
    const tf = await loadTerraform();
    delete tf.resource.google_firestore_field!.rate_limit_failure_ttl;
    expect(checkTtl(tf).problems).toEqual([
      'no google_firestore_field with ttl_config on rate-limit-failures/expires_at',
    ]);
  });

  it('refuses a run queue that does not reach the runner or has no dead letters', async () => {
    const tf = await loadTerraform();
    expect(checkRunQueue(tf).ok).toBe(true);
    const runs = (tf.resource.google_pubsub_subscription as Record<string, Record<string, unknown>[]>)
      .runs![0]!;
    runs.push_config = [{ push_endpoint: 'https://example.com/' }];
    runs.ack_deadline_seconds = 60;
    delete runs.dead_letter_policy;
    expect(checkRunQueue(tf).problems).toEqual([
      'subscription sluice-runs-runner does not push to the runner function',
      'subscription sluice-runs-runner pushes without an OIDC token',
      "sluice-runs-runner: ack_deadline_seconds must be var.runner_timeout_seconds (the runner's answer comes at its end)",
      'sluice-runs-runner has no dead-letter policy to the run dead-letter topic',
    ]);
  });

  it('rejects primitive roles wherever they appear', async () => {
    const doc = await parseHcl(
      'iam.tf',
      'resource "google_project_iam_member" "x" {\n  role = "roles/editor"\n  member = "user:a@b.c"\n}\n',
    );
    const result = checkRoles({ raw: [doc], resource: {}, locals: {} });
    expect(result.ok).toBe(false);
    expect(result.problems[0]).toContain('roles/editor');
  });

  it('routes by exact path first, then the longest prefix', () => {
    const functions = {
      workers: { kind: 'http', paths: ['/api/workers', '/api/workers/*'] },
      enrollment: { kind: 'http', paths: ['/api/workers/enroll'] },
    };
    expect(routeFor('/api/workers', functions)).toBe('workers');
    expect(routeFor('/api/workers/w1/rotate-key', functions)).toBe('workers');
    expect(routeFor('/api/workers/enroll', functions)).toBe('enrollment');
    expect(routeFor('/api/workersx', functions)).toBeUndefined();
  });

  it('catches firebase.json hosting rewrites that disagree with terraform', async () => {
    const tf: Terraform = await loadTerraform();
    const firebase = {
      emulators: { firestore: {}, pubsub: {} },
      hosting: { rewrites: [{ source: '/api/tokens/**', function: { functionId: 'auth' } }] },
    };
    const result = checkFirebase(tf, firebase);
    expect(result.ok).toBe(false);
    expect(result.problems.join('\n')).toContain('does not route /api/tokens/** to tokens');
  });
});
