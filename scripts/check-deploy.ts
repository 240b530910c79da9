// biome-ignore-all lint/suspicious/noTemplateCurlyInString: terraform's ${...} interpolations are literal text here
/**
 * `npm run check:deploy`: checks, with no cloud access, that the code and the cloud
 * deployment agree. It parses terraform/*.tf (with @cdktf/hcl2json) and asserts that:
 *   - every entry point of functions/entry/table.ts has its generated module, and its
 *     function in terraform (`local.functions`), and terraform deploys nothing else;
 *   - every route of every family reaches that family's function through the load
 *     balancer's path rules (simulated: exact paths, `/x/*` prefixes, longest match wins);
 *   - every Firestore query in the code over more than one field has a composite
 *     index, and every collection-group query an index with collection-group scope;
 *   - the TTL policy on `fingerprints.expires_at` exists;
 *   - the API functions trust exactly one proxy hop in X-Forwarded-For (the load balancer);
 *   - no role anywhere is primitive (roles/owner, roles/editor, roles/viewer);
 *   - the API's service account holds no project-wide predefined Pub/Sub role, only the
 *     worker-topic role on that topic and the per-worker-subscriptions role (exact permissions);
 *   - the runner holds no storage role, allows no private egress, and reads no signing key;
 *   - each function's timeout is one its trigger allows (an event-triggered function at
 *     most 540 s), and only families that hold requests open (long polls, streams) get more
 *     than a short API timeout;
 *   - terraform's `shard_objects` is validated to 1..PART_MAX_OBJECTS (whole numbers), the
 *     objects one part request may carry, as the runner's SLUICE_SHARD_OBJECTS is;
 *   - the runner and the relay hold no project-wide Pub/Sub role: each publishes, on the
 *     topics its code publishes to, and nothing else;
 *   - the build account reads the function sources and no other bucket;
 *   - the load balancer accepts TLS 1.2 or later only, and the public may read the UI
 *     bucket's objects but not list it;
 *   - each function is given exactly the secrets its (bundled) code reads, its account may
 *     read them, and the event relay has an account of its own that reads no secret;
 *   - the event relay registers itself as an HTTP function with the Functions Framework;
 *   - firebase.json routes the same paths as terraform (it has no hosting rewrites:
 *     the load balancer is the one router) and keeps its emulators;
 *   - `terraform fmt -check` passes, where terraform is on PATH (and `terraform
 *     validate`, where `terraform init` has been run: it needs the providers).
 *
 *   npm run check:deploy
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse as parseHcl } from '@cdktf/hcl2json';
import ts from 'typescript';
import { cloudClients } from '../functions/adapters/clients.ts';
import { ALL_COLLECTIONS } from '../functions/adapters/firestore-paths.ts';
import { loadConfig, SHARD_OBJECTS_MAX } from '../functions/app/config.ts';
import type { FamilyFactory } from '../functions/app/create-app.ts';
import { createLogger } from '../functions/app/logger.ts';
import { type Entry, entrySource, entryTable, type HttpEntry } from '../functions/entry/table.ts';
import { WORKER_TOPIC } from '../functions/messaging/worker-channel.ts';
import {
  RUN_DEAD_LETTER_SUBSCRIPTION,
  RUN_DEAD_LETTER_TOPIC,
  RUN_SUBSCRIPTION,
  RUN_TOPIC,
} from '../functions/runs/run-channel.ts';
import { EXPIRING_COLLECTIONS } from '../functions/scheduled/ttl-sweep.ts';
import { PART_MAX_OBJECTS } from '../shared/runs/run-request.ts';
import { ENTRY_DIR, ROOT } from './build.ts';

export interface CheckResult {
  name: string;
  ok: boolean;
  problems: string[];
  notes?: string[];
}

// biome-ignore lint/suspicious/noExplicitAny: terraform parsed to JSON, walked freely
type Json = Record<string, any>;

export interface Terraform {
  /** The merged JSON of every .tf file (blocks as hcl2json gives them: lists of objects). */
  resource: Json;
  locals: Json;
  raw: Json[];
}

export async function loadTerraform(dir = join(ROOT, 'terraform')): Promise<Terraform> {
  const raw: Json[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.tf'))
    .sort()) {
    raw.push(await parseHcl(file, readFileSync(join(dir, file), 'utf8')));
  }
  const resource: Json = {};
  const locals: Json = {};
  for (const doc of raw) {
    for (const [type, byName] of Object.entries<Json>(doc.resource ?? {})) {
      resource[type] = { ...resource[type], ...byName };
    }
    for (const block of doc.locals ?? []) Object.assign(locals, block);
  }
  return { resource, locals, raw };
}

function result(name: string, problems: string[], notes?: string[]): CheckResult {
  return { name, ok: problems.length === 0, problems, ...(notes ? { notes } : {}) };
}

// ---------------------------------------------------------------- entry points

interface TfFunction {
  kind: string;
  paths: string[];
  /** The groups of local.secret_env mounted on it. */
  secrets?: string[];
}

export function terraformFunctions(tf: Terraform): Record<string, TfFunction> {
  return (tf.locals.functions ?? {}) as Record<string, TfFunction>;
}

export function checkEntries(entries: Entry[], tf: Terraform): CheckResult {
  const problems: string[] = [];
  const functions = terraformFunctions(tf);
  for (const entry of entries) {
    const file = join(ROOT, 'functions/entry', `${entry.name}.ts`);
    if (!existsSync(file) || readFileSync(file, 'utf8') !== entrySource(entry)) {
      problems.push(`functions/entry/${entry.name}.ts is missing or stale: run \`npm run build\``);
    }
    const fn = functions[entry.name];
    if (!fn) {
      problems.push(`entry "${entry.name}" has no function in terraform/functions.tf (local.functions)`);
      continue;
    }
    const kind =
      entry.kind === 'tasks' || entry.kind === 'relay' || entry.kind === 'runs' ? entry.kind : 'http';
    if (fn.kind !== kind)
      problems.push(`terraform function "${entry.name}" has kind "${fn.kind}", want "${kind}"`);
  }
  const names = new Set(entries.map((e) => e.name));
  for (const name of Object.keys(functions)) {
    if (!names.has(name)) problems.push(`terraform deploys "${name}", which no entry point builds`);
  }
  const resource = tf.resource.google_cloudfunctions2_function?.fn?.[0];
  if (!resource) problems.push('terraform has no google_cloudfunctions2_function.fn');
  else if (resource.for_each !== '${local.functions}') {
    problems.push('google_cloudfunctions2_function.fn must have for_each = local.functions');
  }
  return result('every entry point has its function', problems);
}

/** Imports each family module of the table and checks it is the factory ALL_FAMILIES mounts locally. */
export async function checkFamilies(entries: Entry[]): Promise<CheckResult> {
  const problems: string[] = [];
  const { ALL_FAMILIES } = await import('../functions/families.ts');
  const seen = new Set<FamilyFactory>();
  for (const entry of entries.filter((e): e is HttpEntry => e.kind === 'http')) {
    const url = pathToFileURL(join(ROOT, 'functions/entry', entry.module)).href;
    const factory = (await import(url))[entry.exportName] as FamilyFactory | undefined;
    if (!factory || !ALL_FAMILIES.includes(factory)) {
      problems.push(`${entry.module} ${entry.exportName} is not in ALL_FAMILIES`);
      continue;
    }
    seen.add(factory);
    const family = factory(offlineDeps());
    if (family.name !== entry.name) {
      problems.push(
        `the family in functions/${entry.name}/ is named "${family.name}": name it "${entry.name}"`,
      );
    }
  }
  const missing = ALL_FAMILIES.filter((f) => !seen.has(f)).map((f) => f.name);
  if (missing.length) {
    problems.push(
      `ALL_FAMILIES has factories that functions/families.ts does not import as ` +
        `\`import { xFamily } from './x/routes.ts'\`: ${missing.join(', ')}`,
    );
  }
  return result('the entry table matches ALL_FAMILIES', problems);
}

function offlineDeps() {
  const config = loadConfig({});
  return {
    config,
    clients: cloudClients({ projectId: 'demo-check' }),
    logger: createLogger({ level: 'silent' }),
  };
}

// ---------------------------------------------------------------- routes

/** The function a request path reaches: an exact path rule, else the longest `/prefix/*` rule. */
export function routeFor(path: string, functions: Record<string, TfFunction>): string | undefined {
  let best: { name: string; length: number } | undefined;
  for (const [name, fn] of Object.entries(functions)) {
    for (const rule of fn.paths ?? []) {
      const matches = rule.endsWith('/*') ? path.startsWith(rule.slice(0, -1)) : path === rule;
      const length = rule.endsWith('/*') ? rule.length - 1 : Number.POSITIVE_INFINITY;
      if (matches && (!best || length > best.length)) best = { name, length };
    }
  }
  return best?.name;
}

/** Each family's concrete paths (`:param` and `*` filled in), from its routes as Hono registered them. */
export async function familyPaths(entries: Entry[]): Promise<Map<string, string[]>> {
  const paths = new Map<string, string[]>();
  for (const entry of entries.filter((e): e is HttpEntry => e.kind === 'http')) {
    const url = pathToFileURL(join(ROOT, 'functions/entry', entry.module)).href;
    const family = ((await import(url))[entry.exportName] as FamilyFactory)(offlineDeps());
    const concrete = family.routes.routes
      .filter((r) => r.method !== 'ALL') // middleware, not routes
      .map((r) => `/api${r.path.replace(/:[^/]+/g, 'x').replace(/\*/g, 'x')}`);
    paths.set(entry.name, [...new Set(concrete)]);
  }
  return paths;
}

export async function checkRoutes(entries: Entry[], tf: Terraform): Promise<CheckResult> {
  const problems: string[] = [];
  const functions = terraformFunctions(tf);
  for (const [name, paths] of await familyPaths(entries)) {
    for (const path of paths) {
      const target = routeFor(path, functions);
      if (target !== name) {
        problems.push(`${path} (family ${name}) reaches ${target ?? 'no function'}; add a path rule for it`);
      }
    }
  }
  if (routeFor('/api/openapi.json', functions) !== 'openapi')
    problems.push('/api/openapi.json must reach openapi');
  const urlMap = tf.resource.google_compute_url_map?.api?.[0];
  const rule = urlMap?.path_matcher?.[0]?.dynamic?.path_rule?.[0];
  if (!rule || rule.for_each !== '${local.http_functions}') {
    problems.push('google_compute_url_map.api needs a dynamic path_rule for_each = local.http_functions');
  }
  return result('every route reaches its function', problems);
}

// ---------------------------------------------------------------- Firestore

const EQUALITY = new Set(['==', 'in', 'array-contains', 'array-contains-any']);

export interface FoundQuery {
  file: string;
  line: number;
  collection?: string | undefined;
  collectionGroup: boolean;
  equality: string[];
  /** Range filters, then orderBy fields, in order. */
  sort: string[];
  /** The direction of each sort field: `either` when the code chooses it at run time. */
  directions: SortDirection[];
}

type SortDirection = 'asc' | 'desc' | 'either';

/** `orderBy(field, direction)`'s direction, as far as the source says. */
function directionOf(node: ts.Expression | undefined): SortDirection {
  if (!node) return 'asc';
  const text = literal(node);
  return text === 'asc' || text === 'desc' ? text : 'either';
}

function literal(node: ts.Node | undefined): string | undefined {
  if (!node) return undefined;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  return undefined;
}

/** The builders of functions/adapters/firestore-paths.ts: their last argument names the collection. */
const PATH_BUILDERS = new Set(['rootCollection', 'tenantCollection', 'jobCollection', 'collectionGroup']);

/** The collection id a `.collection(...)` argument names: its last path segment, when that is literal. */
function collectionId(node: ts.Node | undefined): string | undefined {
  if (!node) return undefined;
  const text =
    literal(node) ?? (ts.isTemplateExpression(node) ? node.templateSpans.at(-1)?.literal.text : undefined);
  const id = text?.split('/').at(-1);
  return id || undefined;
}

/**
 * Finds the queries of a source file: every `.where(field, op)` / `.orderBy(field)` with a
 * literal field, grouped by the function that builds them (queries built step by step
 * in one function count as one), with the collection of that function's
 * `.collection()` / `.collectionGroup()` call or helper returning one.
 */
export function findQueries(file: string, source: string, helpers: Map<string, string>): FoundQuery[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const groups = new Map<ts.Node, FoundQuery>();
  const visit = (node: ts.Node, scope: ts.Node) => {
    const inner = ts.isFunctionLike(node) ? node : scope;
    // Children first: in `q.orderBy('a').orderBy('b')` the call of 'a' is inside the call of 'b'.
    ts.forEachChild(node, (child) => visit(child, inner));
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const field = literal(node.arguments[0]);
      if ((method === 'where' || method === 'orderBy') && field) {
        let query = groups.get(inner);
        if (!query) {
          const { line } = sf.getLineAndCharacterOfPosition(node.getStart());
          query = {
            file,
            line: line + 1,
            ...collectionOf(inner, helpers),
            equality: [],
            sort: [],
            directions: [],
          };
          groups.set(inner, query);
        }
        const op = method === 'where' ? literal(node.arguments[1]) : 'order';
        if (op && EQUALITY.has(op)) {
          if (!query.equality.includes(field)) query.equality.push(field);
        } else {
          // A range filter sorts ascending unless an orderBy of the same field says otherwise.
          const direction = method === 'orderBy' ? directionOf(node.arguments[1]) : 'asc';
          const at = query.sort.indexOf(field);
          if (at === -1) {
            query.sort.push(field);
            query.directions.push(direction);
          } else if (method === 'orderBy') query.directions[at] = direction;
        }
      }
    }
  };
  visit(sf, sf);
  return [...groups.values()];
}

function collectionOf(
  scope: ts.Node,
  helpers: Map<string, string>,
): { collection?: string; collectionGroup: boolean } {
  let found: { collection?: string; collectionGroup: boolean } | undefined;
  const visit = (node: ts.Node) => {
    if (found) return;
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const direct = collectionCall(node);
      if (direct) found = direct;
      else if (ts.isIdentifier(callee) && helpers.has(callee.text))
        found = { collection: helpers.get(callee.text)!, collectionGroup: false };
    }
    ts.forEachChild(node, visit);
  };
  visit(scope);
  return found ?? { collectionGroup: false };
}

/**
 * The collection a call names, if it names one: `x.collection('events')`,
 * `x.collectionGroup('jobs')`, or a builder of firestore-paths.ts (`tenantCollection(db, t, 'jobs')`).
 */
function collectionCall(
  node: ts.CallExpression,
): { collection: string; collectionGroup: boolean } | undefined {
  const callee = node.expression;
  let id: string | undefined;
  let name = '';
  if (ts.isPropertyAccessExpression(callee)) {
    name = callee.name.text;
    if (name === 'collection' || name === 'collectionGroup') id = collectionId(node.arguments[0]);
  } else if (ts.isIdentifier(callee) && PATH_BUILDERS.has(callee.text)) {
    name = callee.text;
    id = collectionId(node.arguments.at(-1));
  }
  return id ? { collection: id, collectionGroup: name === 'collectionGroup' } : undefined;
}

/** Functions that return a collection reference (`eventsCollection(db, t)` → `events`). */
function findHelpers(file: string, source: string, helpers: Map<string, string>): void {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node) => {
    let name: string | undefined;
    let body: ts.Node | undefined;
    if (ts.isFunctionDeclaration(node) && node.name) [name, body] = [node.name.text, node.body];
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer &&
      ts.isArrowFunction(node.initializer)
    ) {
      [name, body] = [node.name.text, node.initializer.body];
    }
    if (name && body) {
      const returned = ts.isBlock(body) ? body.statements.find(ts.isReturnStatement)?.expression : body;
      const call = returned && ts.isCallExpression(returned) ? collectionCall(returned) : undefined;
      if (call?.collection && !call.collectionGroup) helpers.set(name, call.collection);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.includes('node_modules'))
    .map((f) => join(dir, f));
}

export function codeQueries(dirs = ['functions', 'shared', 'local'].map((d) => join(ROOT, d))): FoundQuery[] {
  const files = dirs.flatMap(sourceFiles).map((f) => [f, readFileSync(f, 'utf8')] as const);
  const helpers = new Map<string, string>();
  for (const [file, source] of files) findHelpers(file, source, helpers);
  return files.flatMap(([file, source]) => findQueries(relative(ROOT, file), source, helpers));
}

interface TfIndex {
  collection: string;
  fields: [string, string][];
  scope: string;
}

export function terraformIndexes(tf: Terraform): TfIndex[] {
  const scope = tf.resource.google_firestore_index?.composite?.[0]?.query_scope ?? 'COLLECTION';
  return Object.values<{ collection: string; fields: [string, string][] }>(
    tf.locals.composite_indexes ?? {},
  ).map((i) => ({ ...i, scope }));
}

/** A field an index must hold, in order: an equality field in either direction, a sort field in its own. */
type Need = [field: string, order?: 'ASCENDING' | 'DESCENDING'];

/** Does an index serve `fields` in that order (other fields may sit between)? */
function covers(index: TfIndex, fields: Need[]): boolean {
  let at = 0;
  for (const [field, order] of index.fields) {
    const [want, wantOrder] = fields[at] ?? [];
    if (field === want && (!wantOrder || order === wantOrder)) at++;
  }
  return at === fields.length;
}

/** The sort fields with their index orders: a query whose direction is chosen at run time needs both. */
function sortVariants(q: FoundQuery): Need[][] {
  let variants: Need[][] = [[]];
  q.sort.forEach((field, i) => {
    const direction = q.directions[i] ?? 'asc';
    const orders = (
      direction === 'either'
        ? ['ASCENDING', 'DESCENDING']
        : [direction === 'desc' ? 'DESCENDING' : 'ASCENDING']
    ) as Need[1][];
    variants = variants.flatMap((v) => orders.map((order) => [...v, [field, order] as Need]));
  });
  return variants;
}

const describeNeed = (fields: Need[]) =>
  fields.map(([field, order]) => (order === 'DESCENDING' ? `${field} desc` : field)).join(', ');

/**
 * Firestore serves equality-only queries by merging single-field indexes. A query that
 * also sorts (range filter or orderBy) needs, for each equality field, an index of that
 * field followed by the sort fields (Firestore merges those); a query that sorts on
 * two fields needs an index of both.
 */
export function missingIndexes(queries: FoundQuery[], tf: Terraform): string[] {
  const indexes = terraformIndexes(tf);
  const groupFields = Object.values<{ collection: string; field: string }>(
    tf.locals.collection_group_fields ?? {},
  );
  const problems: string[] = [];
  for (const q of queries) {
    const where = `${q.file}:${q.line} (${q.collection ?? 'unknown collection'})`;
    const wantScope = q.collectionGroup ? 'COLLECTION_GROUP' : 'COLLECTION';
    const candidates = indexes.filter(
      (i) =>
        (!q.collection || i.collection === q.collection) && (i.scope === wantScope || !q.collectionGroup),
    );
    const sort = q.sort;
    const needs: Need[][] = [];
    if (sort.length > 0) {
      for (const variant of sortVariants(q)) {
        for (const field of q.equality.filter((f) => !sort.includes(f))) needs.push([[field], ...variant]);
        if (q.equality.every((f) => sort.includes(f)) && sort.length > 1) needs.push(variant);
      }
    }
    for (const fields of needs) {
      if (!candidates.some((i) => covers(i, fields))) {
        problems.push(
          `${where}: no ${wantScope} composite index on (${describeNeed(fields)}) in terraform/firestore.tf`,
        );
      }
    }
    if (q.collectionGroup && needs.length === 0) {
      for (const field of [...q.equality, ...sort]) {
        if (!groupFields.some((g) => g.collection === q.collection && g.field === field)) {
          problems.push(
            `${where}: collection-group query on "${field}" needs local.collection_group_fields in terraform/firestore.tf`,
          );
        }
      }
    }
  }
  return problems;
}

export function checkIndexes(tf: Terraform): CheckResult {
  const queries = codeQueries();
  const notes = queries.map(
    (q) =>
      `${q.file}:${q.line} ${q.collectionGroup ? 'group ' : ''}${q.collection ?? '?'} ` +
      `eq[${q.equality.join(',')}] sort[${q.sort.map((f, i) => (q.directions[i] === 'asc' ? f : `${f} ${q.directions[i]}`)).join(',')}]`,
  );
  return result('every Firestore query has its index', missingIndexes(queries, tf), notes);
}

/**
 * Every collection terraform configures (indexes, collection-group fields, TTL policies)
 * and every collection a query in the code reads is one that functions/adapters/firestore-paths.ts
 * declares: a renamed collection cannot leave an index or a TTL policy behind on the old name.
 */
export function checkCollections(tf: Terraform, queries = codeQueries()): CheckResult {
  const declared = new Set<string>(ALL_COLLECTIONS);
  const named: [string, string][] = [
    ...terraformIndexes(tf).map((i) => [i.collection, 'a composite index'] as [string, string]),
    ...Object.values<{ collection: string }>(tf.locals.collection_group_fields ?? {}).map(
      (g) => [g.collection, 'local.collection_group_fields'] as [string, string],
    ),
    ...Object.values<Json[]>(tf.resource.google_firestore_field ?? {}).map(
      (f) => [String(f[0]!.collection), 'a google_firestore_field'] as [string, string],
    ),
  ];
  const problems = [
    ...named
      .filter(([collection]) => !declared.has(collection) && !collection.startsWith('${'))
      .map(
        ([collection, what]) =>
          `terraform/firestore.tf: ${what} on "${collection}", which firestore-paths.ts does not declare`,
      ),
    ...queries
      .filter((q) => q.collection !== undefined && !declared.has(q.collection))
      .map(
        (q) => `${q.file}:${q.line}: a query on "${q.collection}", which firestore-paths.ts does not declare`,
      ),
  ];
  return result(
    `every collection is declared in functions/adapters/firestore-paths.ts (${declared.size})`,
    problems,
  );
}

/** Collections whose documents the code gives an `expires_at` for Firestore to delete them by. */
const TTL_FIELDS = EXPIRING_COLLECTIONS.map(({ collection, field }) => [collection, field] as const);

export function checkTtl(tf: Terraform): CheckResult {
  const fields = Object.values<Json[]>(tf.resource.google_firestore_field ?? {}).map((f) => f[0]!);
  const missing = TTL_FIELDS.filter(
    ([collection, field]) =>
      !fields.some((f) => f.collection === collection && f.field === field && f.ttl_config),
  );
  return result(
    `TTL policy on ${TTL_FIELDS.map(([c, f]) => `${c}.${f}`).join(', ')}`,
    missing.map(([c, f]) => `no google_firestore_field with ttl_config on ${c}/${f}`),
  );
}

// ---------------------------------------------------------------- client addresses

/**
 * The API functions sit behind Google's load balancer, which appends `<client>, <balancer>`
 * to X-Forwarded-For. Without SLUICE_TRUSTED_PROXY_HOPS the functions use the socket
 * address (the front end's), and every client would share one failed-login limit.
 */
export function checkProxyHops(tf: Terraform): CheckResult {
  const problems: string[] = [];
  const hops = tf.locals.common_env?.SLUICE_TRUSTED_PROXY_HOPS;
  if (hops === undefined)
    problems.push('local.common_env in terraform/functions.tf lacks SLUICE_TRUSTED_PROXY_HOPS');
  else if (String(hops) !== '1')
    problems.push(`SLUICE_TRUSTED_PROXY_HOPS is "${hops}"; behind Google's load balancer it must be "1"`);
  const fn = tf.resource.google_cloudfunctions2_function?.fn?.[0];
  const env = fn?.service_config?.[0]?.environment_variables;
  // local.common_env, or it merged with keys of one kind of function (the runner's read threads).
  if (env !== '${local.common_env}' && !String(env).startsWith('${merge(local.common_env,'))
    problems.push('google_cloudfunctions2_function.fn must set environment_variables = local.common_env');
  return result('SLUICE_TRUSTED_PROXY_HOPS is set for the API functions', problems);
}

// ---------------------------------------------------------------- the cloud worker's sandbox

/**
 * The scheduled function runs every tenant's jobs: it must hold no project-wide Cloud
 * Storage role (a gcs job would read every tenant's buckets through it), and its jobs
 * may connect to no loopback or private address (SLUICE_EGRESS_ALLOW empty).
 */
export function checkRunnerSandbox(tf: Terraform): CheckResult {
  const problems: string[] = [];
  const runnerRoles = (tf.locals.project_roles?.runner?.roles ?? []) as unknown;
  const roles = Array.isArray(runnerRoles) ? runnerRoles.map(String) : [String(runnerRoles)];
  for (const role of roles) {
    if (/storage|\$\{/.test(role))
      problems.push(
        `local.project_roles.runner grants ${role}: the runner may hold no project-wide storage role`,
      );
  }
  const allow = tf.locals.common_env?.SLUICE_EGRESS_ALLOW;
  if (allow === undefined)
    problems.push('local.common_env in terraform/functions.tf lacks SLUICE_EGRESS_ALLOW');
  else if (String(allow).trim() !== '')
    problems.push(`SLUICE_EGRESS_ALLOW is "${allow}"; the cloud worker's jobs may reach no private address`);
  return result("the cloud worker's jobs get no storage role and no private egress", problems);
}

/** Secrets that only the API functions may read: the runner issues and verifies no token. */
const SIGNING_SECRETS = ['signing_key', 'previous_signing_keys'];

export function checkRunnerSecrets(tf: Terraform): CheckResult {
  const problems: string[] = [];
  const grants = (tf.resource.google_secret_manager_secret_iam_member ?? {}) as Json;
  for (const [name, blocks] of Object.entries(grants)) {
    for (const block of blocks as Json[]) {
      if (!String(block.member).includes('google_service_account.runner')) continue;
      const from = String(block.for_each ?? block.secret_id);
      const local = /^\$\{local\.(\w+)\}$/.exec(from)?.[1];
      const ids = local ? Object.keys((tf.locals[local] ?? {}) as Json) : [from];
      for (const id of ids) {
        if (SIGNING_SECRETS.some((secret) => id.includes(secret)))
          problems.push(`google_secret_manager_secret_iam_member.${name} gives the runner ${id}`);
      }
    }
  }
  for (const fn of (tf.resource.google_cloudfunctions2_function?.fn ?? []) as Json[]) {
    const config = (fn.service_config as Json[] | undefined)?.[0] ?? {};
    for (const env of (config.secret_environment_variables ?? []) as Json[]) {
      if (/SIGNING/.test(String(env.key)))
        problems.push(`${env.key} is given to every function, the runner included; give it to the API only`);
    }
  }
  // Secrets are mounted by the groups each function lists (local.functions `secrets`,
  // local.secret_env): only the API (kind "http") issues and verifies tokens.
  const signingGroups = Object.entries((tf.locals.secret_env ?? {}) as Json)
    .filter(([, env]) => Object.keys(env as Json).some((key) => /SIGNING/.test(key)))
    .map(([group]) => group);
  for (const [name, fn] of Object.entries(terraformFunctions(tf))) {
    const given = signingGroups.filter((group) => fn.secrets?.includes(group));
    if (fn.kind !== 'http' && given.length)
      problems.push(
        `the signing keys reach ${name} (kind ${fn.kind}, secrets ${given.join(', ')}): only the API functions issue and verify tokens`,
      );
  }
  return result('the runner reads no signing key', problems);
}

/**
 * The cloud worker's run queue (terraform/runs.tf) as functions/runs/run-channel.ts names
 * it: both subscriptions push to the runner function, the requests' subscription waits for
 * the runner's whole timeout and dead-letters to the dead-letter topic.
 */
export function checkRunQueue(tf: Terraform): CheckResult {
  const problems: string[] = [];
  const topics = (tf.resource.google_pubsub_topic ?? {}) as Record<string, Json[]>;
  const subscriptions = (tf.resource.google_pubsub_subscription ?? {}) as Record<string, Json[]>;
  const topicNames = Object.values(topics).map((blocks) => String(blocks[0]?.name));
  for (const name of [RUN_TOPIC, RUN_DEAD_LETTER_TOPIC])
    if (!topicNames.includes(name)) problems.push(`terraform creates no topic "${name}"`);
  const byName = new Map(
    Object.values(subscriptions).map((blocks) => [String(blocks[0]?.name), blocks[0] as Json]),
  );
  for (const name of [RUN_SUBSCRIPTION, RUN_DEAD_LETTER_SUBSCRIPTION]) {
    const subscription = byName.get(name);
    if (!subscription) {
      problems.push(`terraform creates no subscription "${name}"`);
      continue;
    }
    const push = JSON.stringify(subscription.push_config ?? '');
    if (!push.includes('google_cloudfunctions2_function.fn[\\"runner\\"]'))
      problems.push(`subscription ${name} does not push to the runner function`);
    if (!push.includes('oidc_token')) problems.push(`subscription ${name} pushes without an OIDC token`);
  }
  const runs = byName.get(RUN_SUBSCRIPTION);
  if (runs) {
    if (String(runs.ack_deadline_seconds) !== '${var.runner_timeout_seconds}')
      problems.push(
        `${RUN_SUBSCRIPTION}: ack_deadline_seconds must be var.runner_timeout_seconds (the runner's answer comes at its end)`,
      );
    const deadLetter = JSON.stringify(runs.dead_letter_policy ?? '');
    if (!deadLetter.includes('google_pubsub_topic.run_dead_letters'))
      problems.push(`${RUN_SUBSCRIPTION} has no dead-letter policy to the run dead-letter topic`);
  }
  return result('run requests reach the runner, and failing ones its dead-letter report', problems);
}

/**
 * terraform's `shard_objects` (the runner's SLUICE_SHARD_OBJECTS) is validated to what one
 * part request may carry: whole numbers from 1 to PART_MAX_OBJECTS, the bound the runner's
 * configuration holds it to at start. Without it, `terraform apply` takes a value whose
 * runners refuse to start, or (before that bound) whose parts every runner refuses.
 */
export function checkShardObjects(tf: Terraform): CheckResult {
  const problems: string[] = [];
  const range = `1 to ${PART_MAX_OBJECTS}`;
  if (SHARD_OBJECTS_MAX !== PART_MAX_OBJECTS)
    problems.push(
      `SLUICE_SHARD_OBJECTS allows up to ${SHARD_OBJECTS_MAX} (functions/app/config.ts) but a part request carries at most ${PART_MAX_OBJECTS} (PART_MAX_OBJECTS)`,
    );
  const variable = tf.raw.map((doc) => doc.variable?.shard_objects?.[0] as Json | undefined).find(Boolean);
  if (!variable)
    return result('shard_objects is bounded by what a part request carries', [
      ...problems,
      'terraform declares no variable shard_objects',
    ]);
  const conditions = ((variable.validation ?? []) as Json[]).map((v) =>
    String(v.condition ?? '')
      .replace(/^\$\{([\s\S]*)\}$/, '$1')
      .trim(),
  );
  if (conditions.length === 0) {
    problems.push(
      `variable shard_objects has no validation: give it ${range} (PART_MAX_OBJECTS, the objects one part request may carry)`,
    );
  } else {
    // Every validation must hold: their clauses (joined by &&) together must bound it.
    const clauses = new Set(
      conditions.flatMap((c) => c.split('&&').map((clause) => clause.replace(/\s+/g, ' ').trim())),
    );
    const bounded =
      !conditions.some((c) => c.includes('||')) &&
      clauses.has('var.shard_objects >= 1') &&
      clauses.has(`var.shard_objects <= ${PART_MAX_OBJECTS}`) &&
      clauses.has('floor(var.shard_objects) == var.shard_objects');
    if (!bounded)
      problems.push(
        `variable shard_objects: its validation must allow ${range} (PART_MAX_OBJECTS), whole numbers only; it says "${conditions.join('" and "')}"`,
      );
  }
  const fallback = variable.default;
  if (
    typeof fallback !== 'number' ||
    !Number.isInteger(fallback) ||
    fallback < 1 ||
    fallback > PART_MAX_OBJECTS
  )
    problems.push(`variable shard_objects: its default ${fallback} is outside ${range}`);
  return result('shard_objects is bounded by what a part request carries', problems);
}

// ---------------------------------------------------------------- IAM

const PRIMITIVE = /\broles\/(owner|editor|viewer)\b/;

export function checkRoles(tf: Terraform): CheckResult {
  const problems: string[] = [];
  const walk = (value: unknown, path: string) => {
    if (typeof value === 'string' && PRIMITIVE.test(value)) problems.push(`${path}: primitive role ${value}`);
    else if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) walk(v, `${path}[${i}]`);
    } else if (value && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) walk(v, `${path}.${k}`);
  };
  for (const [i, doc] of tf.raw.entries()) walk(doc, `tf#${i}`);
  return result('no primitive roles', problems);
}

// ---------------------------------------------------------------- the API's Pub/Sub rights

const API_MEMBER = 'serviceAccount:${google_service_account.api.email}';
/** What functions/messaging/worker-channel.ts and the workers' long poll need, and no more. */
export const API_PUBSUB_ROLES = {
  api_worker_topic: ['pubsub.topics.attachSubscription', 'pubsub.topics.get', 'pubsub.topics.publish'],
  api_worker_subscriptions: [
    'pubsub.subscriptions.consume',
    'pubsub.subscriptions.create',
    'pubsub.subscriptions.delete',
    'pubsub.subscriptions.get',
  ],
} as const;

/**
 * `roles/pubsub.editor` on the project would let the API (and anyone who takes it over)
 * delete or reconfigure every topic and subscription in the project. It gets the worker
 * topic's rights on that topic alone, and project-level rights over subscriptions only
 * because Pub/Sub checks `pubsub.subscriptions.create` on the project.
 */
export function checkApiPubsub(tf: Terraform): CheckResult {
  const problems: string[] = [];
  const apiRoles = (tf.locals.project_roles?.api?.roles ?? []) as unknown;
  for (const role of Array.isArray(apiRoles) ? apiRoles.map(String) : [String(apiRoles)]) {
    if (/pubsub|\$\{/.test(role))
      problems.push(`local.project_roles.api grants ${role}: the API may hold no project-wide Pub/Sub role`);
  }
  const projectMembers = tf.resource.google_project_iam_member ?? {};
  for (const [name, blocks] of Object.entries<Json[]>(projectMembers)) {
    const block = blocks[0] ?? {};
    if (block.member === API_MEMBER && /roles\/pubsub\./.test(String(block.role)))
      problems.push(`google_project_iam_member.${name} grants the API ${block.role} on the whole project`);
  }
  for (const [role, wanted] of Object.entries(API_PUBSUB_ROLES)) {
    const declared = tf.resource.google_project_iam_custom_role?.[role]?.[0];
    if (!declared) {
      problems.push(`google_project_iam_custom_role.${role} is missing`);
      continue;
    }
    const permissions = [...((declared.permissions ?? []) as string[])].sort();
    if (JSON.stringify(permissions) !== JSON.stringify([...wanted].sort()))
      problems.push(
        `google_project_iam_custom_role.${role} has [${permissions.join(', ')}]; it must have exactly [${wanted.join(', ')}]`,
      );
  }
  const roleRef = (role: string) => `\${google_project_iam_custom_role.${role}.id}`;
  const topicGrant = Object.values<Json[]>(tf.resource.google_pubsub_topic_iam_member ?? {})
    .map((blocks) => blocks[0] ?? {})
    .find((b) => b.member === API_MEMBER && b.role === roleRef('api_worker_topic'));
  if (!topicGrant)
    problems.push(
      'no google_pubsub_topic_iam_member gives the API google_project_iam_custom_role.api_worker_topic',
    );
  else if (topicGrant.topic !== '${google_pubsub_topic.worker_messages.name}')
    problems.push(`the API's topic role is granted on ${topicGrant.topic}, not the worker topic`);
  const subscriptionsGrant = Object.values<Json[]>(projectMembers)
    .map((blocks) => blocks[0] ?? {})
    .some((b) => b.member === API_MEMBER && b.role === roleRef('api_worker_subscriptions'));
  if (!subscriptionsGrant)
    problems.push(
      'no google_project_iam_member gives the API google_project_iam_custom_role.api_worker_subscriptions',
    );
  return result("the API's Pub/Sub rights are the worker topic and its subscriptions only", problems);
}

// ---------------------------------------------------------------- per-function settings

/** The defaults of terraform/variables.tf, by variable name. */
export function variableDefaults(tf: Terraform): Record<string, unknown> {
  const defaults: Record<string, unknown> = {};
  for (const doc of tf.raw)
    for (const [name, blocks] of Object.entries<Json[]>(doc.variable ?? {}))
      defaults[name] = blocks[0]?.default;
  return defaults;
}

/** A literal, or `${var.x}` (its default), or `${local.x}`, as a value. */
function settingValue(value: unknown, tf: Terraform): unknown {
  if (typeof value !== 'string') return value;
  const ref = /^\$\{(var|local)\.(\w+)\}$/.exec(value);
  if (!ref) return /^\d+$/.test(value) ? Number(value) : value;
  return ref[1] === 'var' ? variableDefaults(tf)[ref[2]!] : tf.locals[ref[2]!];
}

/**
 * What a `service_config` setting of google_cloudfunctions2_function.fn comes to for each
 * function of local.functions. Understands the forms terraform/functions.tf uses: a
 * literal; `try(each.value.<key>, local.<map>[each.value.kind])` (the function's own
 * key, else its kind's entry); `local.<map>[each.value.kind]`; and a chain of
 * `each.value.kind == "<kind>" ? <value> : ...`. Anything else: undefined (a problem).
 */
export function functionSetting(tf: Terraform, setting: string): Map<string, unknown> | undefined {
  const config = (
    tf.resource.google_cloudfunctions2_function?.fn?.[0]?.service_config as Json[] | undefined
  )?.[0];
  const expression = config?.[setting];
  const functions = terraformFunctions(tf) as Record<string, TfFunction & Json>;
  const values = new Map<string, unknown>();
  const inner = typeof expression === 'string' ? /^\$\{([\s\S]*)\}$/.exec(expression)?.[1] : undefined;
  if (expression !== undefined && inner === undefined) {
    for (const name of Object.keys(functions)) values.set(name, settingValue(expression, tf));
    return values;
  }
  if (inner === undefined) return undefined;
  const byKind = /^(?:try\(each\.value\.(\w+), )?local\.(\w+)\[each\.value\.kind\]\)?$/.exec(inner);
  if (byKind) {
    const [, own, map] = byKind;
    const table = (tf.locals[map!] ?? {}) as Json;
    for (const [name, fn] of Object.entries(functions))
      values.set(name, settingValue(own && fn[own] !== undefined ? fn[own] : table[fn.kind], tf));
    return values;
  }
  const chain: [kind: string, value: string][] = [];
  let rest = inner.trim();
  for (let step = /^each\.value\.kind == "(\w+)" \? ([\w.]+) : ([\s\S]+)$/.exec(rest); step; ) {
    chain.push([step[1]!, step[2]!]);
    rest = step[3]!.trim();
    step = /^each\.value\.kind == "(\w+)" \? ([\w.]+) : ([\s\S]+)$/.exec(rest);
  }
  if (!chain.length || !/^[\w.]+$/.test(rest)) return undefined;
  const resolve = (text: string) => settingValue(/^\d+$/.test(text) ? Number(text) : `\${${text}}`, tf);
  for (const [name, fn] of Object.entries(functions))
    values.set(name, resolve(chain.find(([kind]) => kind === fn.kind)?.[1] ?? rest));
  return values;
}

/** Cloud Functions' limits: an event-driven function may run 540 s, an HTTP one 3600 s. */
export const EVENT_TIMEOUT_MAX = 540;
export const HTTP_TIMEOUT_MAX = 3600;
/** An API request that holds nothing open answers well within this. */
export const SHORT_REQUEST_MAX = 300;

/** Route families that hold requests open: a server-sent events stream or a Pub/Sub long poll. */
export function longRequestFamilies(entries: Entry[]): string[] {
  return entries
    .filter((e): e is HttpEntry => e.kind === 'http')
    .filter((e) =>
      sourceFiles(join(ROOT, 'functions', e.name)).some((file) =>
        /\bstreamSSE\(|\.pull\(/.test(readFileSync(file, 'utf8')),
      ),
    )
    .map((e) => e.name);
}

/**
 * Each function's timeout within what Cloud Functions accepts for its trigger (an
 * event-triggered function over 540 s fails `terraform apply`), and the long HTTP timeout
 * kept to the families that hold requests open (the workers' long poll and stream): any
 * other API request is cut within SHORT_REQUEST_MAX.
 */
export function checkTimeouts(tf: Terraform, long: string[]): CheckResult {
  const problems: string[] = [];
  const timeouts = functionSetting(tf, 'timeout_seconds');
  if (!timeouts)
    return result('each function has a timeout its trigger allows', [
      'cannot tell the functions\' timeout_seconds: use lookup(each.value, "timeout", local.timeouts[each.value.kind])',
    ]);
  const trigger = JSON.stringify(
    tf.resource.google_cloudfunctions2_function?.fn?.[0]?.dynamic?.event_trigger ?? '',
  );
  const eventKinds = [...trigger.matchAll(/each\.value\.kind == \\"(\w+)\\"/g)].map((m) => m[1]);
  const notes: string[] = [];
  for (const [name, fn] of Object.entries(terraformFunctions(tf))) {
    const seconds = Number(timeouts.get(name));
    notes.push(`${name}: ${seconds} s`);
    if (!Number.isFinite(seconds) || seconds <= 0) problems.push(`${name}: cannot tell its timeout_seconds`);
    else if (eventKinds.includes(fn.kind) && seconds > EVENT_TIMEOUT_MAX)
      problems.push(
        `${name} (event-triggered) has a timeout of ${seconds} s; event-driven functions allow at most ${EVENT_TIMEOUT_MAX} s`,
      );
    else if (seconds > HTTP_TIMEOUT_MAX)
      problems.push(
        `${name} has a timeout of ${seconds} s; HTTP functions allow at most ${HTTP_TIMEOUT_MAX} s`,
      );
    else if (fn.kind === 'http' && long.includes(name) && seconds < HTTP_TIMEOUT_MAX)
      problems.push(
        `${name} holds requests open (long polls, streams) and needs ${HTTP_TIMEOUT_MAX} s, not ${seconds} s`,
      );
    else if (fn.kind === 'http' && !long.includes(name) && seconds > SHORT_REQUEST_MAX)
      problems.push(
        `${name} has a timeout of ${seconds} s but holds no request open: give it at most ${SHORT_REQUEST_MAX} s (local.timeouts)`,
      );
  }
  return result('each function has a timeout its trigger allows', problems, notes);
}

// ---------------------------------------------------------------- secrets per function

/**
 * How a function's bundle shows that it reads each secret. Every bundle names
 * SLUICE_SECRETS_KEY (functions/app/config.ts reads all settings); only those that encrypt
 * or resolve secrets use `config.secretsKey`.
 */
export const SECRET_READS: Record<string, RegExp> = {
  SLUICE_SIGNING_KEY: /\bSLUICE_SIGNING_KEY\b/,
  SLUICE_PREVIOUS_SIGNING_KEYS: /\bSLUICE_PREVIOUS_SIGNING_KEYS\b/,
  SLUICE_SECRETS_KEY: /\.secretsKey\b/,
};

/** The secrets each entry's bundle reads (bundled in memory as `npm run build` does, tree-shaken). */
export async function secretsReadByBundles(entries: Entry[]): Promise<Map<string, string[]>> {
  const { build } = await import('esbuild');
  const out = await build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(entries.map((e) => [e.name, join(ENTRY_DIR, `${e.name}.ts`)])),
    outdir: join(ROOT, 'dist/check-deploy'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    minify: true,
    write: false,
    external: ['@google-cloud/*', 'parquet-wasm', 'apache-arrow'],
    logLevel: 'error',
  });
  const reads = new Map<string, string[]>();
  for (const file of out.outputFiles) {
    const name = file.path.split('/').at(-1)!.replace(/\.js$/, '');
    reads.set(
      name,
      Object.entries(SECRET_READS)
        .filter(([, marker]) => marker.test(file.text))
        .map(([env]) => env),
    );
  }
  return reads;
}

const SECRET_FOR_EACH = '${merge({}, [for group in each.value.secrets : local.secret_env[group]]...)}';

/**
 * The secret environment variables terraform mounts on each function: static blocks on
 * every function, and the dynamic block of local.functions' `secrets`; `unknown` says why
 * a dynamic block could not be read (its secrets are then left out).
 */
export function mountedSecrets(tf: Terraform): { mounted: Map<string, string[]>; unknown?: string } {
  const config =
    (tf.resource.google_cloudfunctions2_function?.fn?.[0]?.service_config as Json[] | undefined)?.[0] ?? {};
  const everywhere = ((config.secret_environment_variables ?? []) as Json[]).map((b) => String(b.key));
  const groups = (tf.locals.secret_env ?? {}) as Record<string, Json>;
  const functions = terraformFunctions(tf) as Record<string, TfFunction & Json>;
  const mounted = new Map<string, string[]>();
  for (const name of Object.keys(functions)) mounted.set(name, [...everywhere]);
  let unknown: string | undefined;
  for (const dynamic of ((config.dynamic as Json | undefined)?.secret_environment_variables ??
    []) as Json[]) {
    if (dynamic.for_each !== SECRET_FOR_EACH) {
      unknown = `a dynamic secret_environment_variables must have for_each = ${SECRET_FOR_EACH.slice(2, -1)}`;
      continue;
    }
    for (const [name, fn] of Object.entries(functions)) {
      for (const group of (fn.secrets ?? []) as string[]) {
        if (groups[group]) mounted.get(name)!.push(...Object.keys(groups[group]));
        else unknown = `${name}: secrets group "${group}" is not in local.secret_env`;
      }
    }
  }
  return unknown ? { mounted, unknown } : { mounted };
}

/** Which secrets (local.secret_ids keys, or a literal secret id) each service account may read. */
function secretGrants(tf: Terraform): Map<string, string[]> {
  const grants = new Map<string, string[]>();
  for (const blocks of Object.values<Json[]>(tf.resource.google_secret_manager_secret_iam_member ?? {})) {
    for (const block of blocks) {
      const account =
        /google_service_account\.(\w+)\.email/.exec(String(block.member))?.[1] ?? String(block.member);
      const from = String(block.for_each ?? block.secret_id);
      const local = /^\$\{local\.(\w+)\}$/.exec(from)?.[1];
      const secrets = local ? Object.values((tf.locals[local] ?? {}) as Json).map(String) : [from];
      grants.set(account, [...(grants.get(account) ?? []), ...secrets]);
    }
  }
  return grants;
}

/**
 * Each function is given exactly the secrets its code reads (its bundle, tree-shaken) and
 * its service account may read those; the event relay runs as an identity of its own that
 * may read no secret (it used to run as the API's, which can read the signing keys).
 */
export function checkSecretMounts(tf: Terraform, reads: Map<string, string[]>): CheckResult {
  const problems: string[] = [];
  const { mounted, unknown } = mountedSecrets(tf);
  if (unknown) problems.push(unknown);
  for (const [name, envs] of mounted) {
    const read = reads.get(name) ?? [];
    const extra = envs.filter((env) => !read.includes(env));
    const missing = read.filter((env) => !envs.includes(env));
    if (extra.length)
      problems.push(
        `${name} is given ${extra.join(', ')}, which its code never reads (local.functions secrets)`,
      );
    if (missing.length && !unknown)
      problems.push(`${name} reads ${missing.join(', ')}, which terraform does not give it`);
  }
  const identities = functionSetting(tf, 'service_account_email');
  const grants = secretGrants(tf);
  const envSecret: Record<string, string> = {};
  for (const group of Object.values((tf.locals.secret_env ?? {}) as Record<string, Json>))
    for (const [env, secret] of Object.entries(group)) envSecret[env] = String(secret);
  if (!identities) problems.push('service_account_email must be local.service_accounts[each.value.kind]');
  else {
    const accountOf = (name: string) =>
      /google_service_account\.(\w+)\.email/.exec(String(identities.get(name)))?.[1];
    for (const [name, fn] of Object.entries(terraformFunctions(tf))) {
      const account = accountOf(name);
      if (fn.kind === 'relay') {
        if (!account || ['api', 'runner'].includes(account))
          problems.push(
            `${name} runs as ${account ?? identities.get(name)}: give the relay a service account of its own`,
          );
        else if (grants.get(account)?.length)
          problems.push(
            `the relay's account (${account}) may read secrets: ${grants.get(account)!.join(', ')}`,
          );
      }
      if (!account) continue;
      for (const env of mounted.get(name) ?? []) {
        const secret = envSecret[env];
        if (secret && !(grants.get(account) ?? []).includes(secret))
          problems.push(`${name} is given ${env} but its account (${account}) may not read ${secret}`);
      }
    }
  }
  return result('each function gets only the secrets its code reads', problems);
}

// ---------------------------------------------------------------- Pub/Sub publishers

/**
 * What each internal identity publishes (and nothing else on Pub/Sub). The cloud worker's
 * account (the scheduled tick and the runner) publishes run requests (the tick, a run's
 * continuation, a listing's parts: functions/runs/) and drains the outbox to the worker
 * topic; the relay publishes events to the worker topic. Neither pulls in the cloud.
 */
export const PUBLISHERS: Record<string, string[]> = {
  runner: [RUN_TOPIC, WORKER_TOPIC],
  relay: [WORKER_TOPIC],
};

export function checkPublishers(tf: Terraform): CheckResult {
  const problems: string[] = [];
  const topicNames = new Map(
    Object.entries<Json[]>(tf.resource.google_pubsub_topic ?? {}).map(([resource, blocks]) => [
      `\${google_pubsub_topic.${resource}.name}`,
      String(blocks[0]?.name),
    ]),
  );
  for (const [account, wanted] of Object.entries(PUBLISHERS)) {
    const member = `serviceAccount:\${google_service_account.${account}.email}`;
    const roles = (tf.locals.project_roles?.[account]?.roles ?? []) as unknown;
    for (const role of Array.isArray(roles) ? roles.map(String) : [String(roles)])
      if (/pubsub|\$\{/.test(role))
        problems.push(
          `local.project_roles.${account} grants ${role}: ${account} may hold no project-wide Pub/Sub role`,
        );
    for (const [name, blocks] of Object.entries<Json[]>(tf.resource.google_project_iam_member ?? {}))
      if (blocks[0]?.member === member && /pubsub/.test(String(blocks[0]?.role)))
        problems.push(
          `google_project_iam_member.${name} grants ${account} ${blocks[0]?.role} on the whole project`,
        );
    for (const [name, blocks] of Object.entries<Json[]>(
      tf.resource.google_pubsub_subscription_iam_member ?? {},
    ))
      if (blocks[0]?.member === member)
        problems.push(`google_pubsub_subscription_iam_member.${name}: ${account} pulls nothing`);
    const granted: string[] = [];
    for (const [name, blocks] of Object.entries<Json[]>(tf.resource.google_pubsub_topic_iam_member ?? {})) {
      const block = blocks[0] ?? {};
      if (block.member !== member) continue;
      const topic = topicNames.get(String(block.topic)) ?? String(block.topic);
      if (block.role !== 'roles/pubsub.publisher')
        problems.push(
          `google_pubsub_topic_iam_member.${name} gives ${account} ${block.role}; it only publishes`,
        );
      if (!wanted.includes(topic))
        problems.push(
          `google_pubsub_topic_iam_member.${name} lets ${account} publish to ${topic}, which it never does`,
        );
      granted.push(topic);
    }
    for (const topic of wanted)
      if (!granted.includes(topic))
        problems.push(`${account} publishes to ${topic} but no google_pubsub_topic_iam_member lets it`);
  }
  return result('the runner and the relay only publish, to their own topics', problems);
}

// ---------------------------------------------------------------- the build's account

/**
 * Cloud Build installs the archives' dependencies (and runs their install scripts) as the
 * build account: it may read the function sources and no other bucket. It fetches them
 * from gcf-v2-sources-<number>-<region>, which Cloud Functions creates at its first deploy,
 * hence a project grant with a condition naming that bucket rather than a bucket grant.
 */
export function checkBuildAccount(tf: Terraform): CheckResult {
  const problems: string[] = [];
  const member = 'serviceAccount:${google_service_account.build.email}';
  const roles = (tf.locals.project_roles?.build?.roles ?? []) as unknown;
  let reads = false;
  for (const role of Array.isArray(roles) ? roles.map(String) : [String(roles)])
    if (/storage|\$\{/.test(role)) {
      problems.push(`local.project_roles.build grants ${role} on every bucket of the project`);
      reads = true;
    }
  for (const [name, blocks] of Object.entries<Json[]>(tf.resource.google_project_iam_member ?? {})) {
    const block = blocks[0] ?? {};
    if (block.member !== member || !/storage/.test(String(block.role))) continue;
    const expression = String((block.condition as Json[] | undefined)?.[0]?.expression ?? '');
    if (!expression)
      problems.push(`google_project_iam_member.${name} gives the build ${block.role} on every bucket`);
    else if (
      !expression.includes('gcf-v2-sources-') ||
      /startsWith\(\\?"projects\/_\/buckets\/\\?"\)/.test(expression)
    )
      problems.push(`google_project_iam_member.${name}: its condition must name the sources buckets`);
    else reads = true;
  }
  for (const blocks of Object.values<Json[]>(tf.resource.google_storage_bucket_iam_member ?? {}))
    if (blocks[0]?.member === member && blocks[0]?.bucket === '${google_storage_bucket.sources.name}')
      reads = true;
  if (!reads) problems.push('the build account cannot read the function sources (builds would fail)');
  return result('the build reads the function sources only', problems);
}

// ---------------------------------------------------------------- the public edge

/** The TLS versions and ciphers the load balancer accepts, and what anyone may read of the UI bucket. */
export function checkPublicEdge(tf: Terraform): CheckResult {
  const problems: string[] = [];
  const policies = (tf.resource.google_compute_ssl_policy ?? {}) as Record<string, Json[]>;
  for (const [name, blocks] of Object.entries<Json[]>(tf.resource.google_compute_target_https_proxy ?? {})) {
    const ref = /^\$\{google_compute_ssl_policy\.(\w+)\.(?:id|self_link|name)\}$/.exec(
      String(blocks[0]?.ssl_policy),
    );
    const policy = ref ? policies[ref[1]!]?.[0] : undefined;
    if (!policy) {
      problems.push(
        `google_compute_target_https_proxy.${name} has no ssl_policy: TLS 1.0 and 1.1 are accepted`,
      );
      continue;
    }
    if (!['MODERN', 'RESTRICTED'].includes(String(policy.profile)))
      problems.push(`google_compute_ssl_policy.${ref![1]} has profile ${policy.profile}; use MODERN`);
    if (!['TLS_1_2', 'TLS_1_3'].includes(String(policy.min_tls_version)))
      problems.push(
        `google_compute_ssl_policy.${ref![1]} accepts ${policy.min_tls_version ?? 'TLS_1_0'}; the minimum must be TLS_1_2`,
      );
  }
  for (const type of ['google_storage_bucket_iam_member', 'google_storage_bucket_iam_binding']) {
    for (const [name, blocks] of Object.entries<Json[]>(tf.resource[type] ?? {})) {
      const block = blocks[0] ?? {};
      const members = JSON.stringify(block.member ?? block.members ?? '');
      if (/allUsers|allAuthenticatedUsers/.test(members) && block.role !== 'roles/storage.legacyObjectReader')
        problems.push(
          `${type}.${name} gives the public ${block.role}; roles/storage.legacyObjectReader reads objects without listing the bucket`,
        );
    }
  }
  return result('TLS 1.2 or later, and the public reads UI objects only', problems);
}

// ---------------------------------------------------------------- the relay's signature

/**
 * The relay is deployed with an event trigger but reads an HTTP request's headers: it must
 * register itself with the Functions Framework as an HTTP function under the entry point,
 * or the platform may call it with the `cloudevent` signature (no request, no response).
 */
export async function checkRelayHandler(tf: Terraform): Promise<CheckResult> {
  const problems: string[] = [];
  const entryPoint = String(
    (tf.resource.google_cloudfunctions2_function?.fn?.[0]?.build_config as Json[] | undefined)?.[0]
      ?.entry_point,
  );
  const { relayFunction } = await import('../functions/entry/relay-function.ts');
  const registered: [string, string][] = [];
  const framework = {
    http: (name: string) => registered.push(['http', name]),
    cloudEvent: (name: string) => registered.push(['cloudEvent', name]),
  };
  (relayFunction as (deps: unknown, functions?: unknown) => unknown)(offlineDeps(), framework);
  if (!registered.some(([type, name]) => type === 'http' && name === entryPoint))
    problems.push(
      `relayFunction() does not register an HTTP function "${entryPoint}" with the Functions Framework ` +
        `(it registered ${registered.length ? registered.map((r) => r.join(' ')).join(', ') : 'nothing'})`,
    );
  return result('the event relay is served as an HTTP function', problems);
}

// ---------------------------------------------------------------- firebase.json

/** The paths firebase.json's hosting rewrites send to functions or Cloud Run, by function name. */
export function firebaseRoutes(firebase: Json): Map<string, string> {
  const routes = new Map<string, string>();
  const sites = Array.isArray(firebase.hosting)
    ? firebase.hosting
    : firebase.hosting
      ? [firebase.hosting]
      : [];
  for (const site of sites) {
    for (const rewrite of site.rewrites ?? []) {
      const target = rewrite.function?.functionId ?? rewrite.function ?? rewrite.run?.serviceId;
      if (typeof target === 'string') routes.set(rewrite.source ?? rewrite.glob, target);
    }
  }
  return routes;
}

export function checkFirebase(tf: Terraform, firebase: Json): CheckResult {
  const problems: string[] = [];
  const prefix = tf.locals.functions ? 'sluice-' : '';
  const terraformPaths = new Map<string, string>();
  for (const [name, fn] of Object.entries(terraformFunctions(tf))) {
    for (const path of fn.paths) terraformPaths.set(path.replace(/\/\*$/, '/**'), name);
  }
  const hosting = firebaseRoutes(firebase);
  if (hosting.size > 0) {
    for (const [path, name] of terraformPaths) {
      const target = hosting.get(path);
      if (target !== name && target !== `${prefix}${name}`)
        problems.push(`firebase.json does not route ${path} to ${name}`);
    }
    for (const path of hosting.keys()) {
      if (!terraformPaths.has(path)) problems.push(`firebase.json routes ${path}, terraform does not`);
    }
  }
  for (const emulator of ['firestore', 'pubsub']) {
    if (!firebase.emulators?.[emulator]) problems.push(`firebase.json lost its ${emulator} emulator`);
  }
  const notes =
    hosting.size === 0 ? ['firebase.json has no hosting rewrites: the load balancer is the only router'] : [];
  return result('firebase.json and terraform route the same paths', problems, notes);
}

// ---------------------------------------------------------------- web UI

/**
 * The web UI's bucket (terraform/ui.tf) serves every page of web/src/routes.ts: pages
 * outside /api/ reach no function (the URL map's default is the bucket), /api/docs has
 * its own path rule to the bucket, each fixed page is an object, and the bucket sends
 * the same Content-Security-Policy as the local stack.
 */
export async function checkWebUi(tf: Terraform): Promise<CheckResult> {
  const problems: string[] = [];
  const { PAGE_PATHS } = await import('../web/src/routes.ts');
  const { CONTENT_SECURITY_POLICY } = await import('../web/serve.ts');
  const functions = terraformFunctions(tf);
  const matcher = tf.resource.google_compute_url_map?.api?.[0]?.path_matcher?.[0];
  const web = '${google_compute_backend_bucket.web.id}';
  if (!tf.resource.google_compute_backend_bucket?.web)
    problems.push('terraform has no google_compute_backend_bucket.web');
  if (matcher?.default_service !== web)
    problems.push('the URL map path matcher must default to the web UI bucket');
  const staticRules: { paths: string[]; service: string }[] = matcher?.path_rule ?? [];
  const pages: string[] = tf.locals.web_pages ?? [];
  for (const page of PAGE_PATHS) {
    const path = page.replace(/:[^/]+/g, 'x');
    if (path.startsWith('/api/')) {
      if (!staticRules.some((r) => r.paths.includes(path) && r.service === web))
        problems.push(`${path} needs a path rule to the web UI bucket`);
    } else if (routeFor(path, functions)) {
      problems.push(`${path} (a web UI page) reaches the function ${routeFor(path, functions)}`);
    }
    if (page !== '/' && !page.includes(':') && !pages.includes(page.slice(1)))
      problems.push(`${page} is not in local.web_pages of terraform/ui.tf`);
  }
  if (tf.locals.web_csp !== CONTENT_SECURITY_POLICY)
    problems.push('local.web_csp in terraform/ui.tf differs from CONTENT_SECURITY_POLICY in web/serve.ts');
  return result('the web UI bucket serves every page', problems);
}

// ---------------------------------------------------------------- terraform CLI

export function checkTerraformCli(dir = join(ROOT, 'terraform')): CheckResult {
  const found = spawnSync('terraform', ['version'], { encoding: 'utf8' });
  if (found.error) return result('terraform fmt', [], ['terraform is not on PATH: skipped']);
  const problems: string[] = [];
  const notes: string[] = [];
  const fmt = spawnSync('terraform', ['fmt', '-check', '-recursive', '-list=true'], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (fmt.status !== 0)
    problems.push(`terraform fmt -check: run \`terraform fmt\` on ${fmt.stdout.trim() || fmt.stderr.trim()}`);
  if (existsSync(join(dir, '.terraform'))) {
    const validate = spawnSync('terraform', ['validate', '-no-color'], { cwd: dir, encoding: 'utf8' });
    if (validate.status !== 0)
      problems.push(`terraform validate: ${validate.stdout}${validate.stderr}`.trim());
  } else {
    notes.push('terraform validate skipped: it needs `terraform init` (downloads the google provider)');
  }
  return result('terraform fmt (and validate)', problems, notes);
}

// ---------------------------------------------------------------- all

export async function runDeployChecks(options: { terraformCli?: boolean } = {}): Promise<CheckResult[]> {
  const entries = await entryTable();
  const tf = await loadTerraform();
  const firebase = JSON.parse(readFileSync(join(ROOT, 'firebase.json'), 'utf8')) as Json;
  const results = [
    checkEntries(entries, tf),
    await checkFamilies(entries),
    await checkRoutes(entries, tf),
    checkIndexes(tf),
    checkCollections(tf),
    checkTtl(tf),
    checkProxyHops(tf),
    checkRoles(tf),
    checkApiPubsub(tf),
    checkRunnerSandbox(tf),
    checkRunnerSecrets(tf),
    checkRunQueue(tf),
    checkShardObjects(tf),
    checkTimeouts(tf, longRequestFamilies(entries)),
    checkPublishers(tf),
    checkBuildAccount(tf),
    checkPublicEdge(tf),
    checkSecretMounts(tf, await secretsReadByBundles(entries)),
    await checkRelayHandler(tf),
    checkFirebase(tf, firebase),
    await checkWebUi(tf),
  ];
  if (options.terraformCli !== false) results.push(checkTerraformCli());
  return results;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const results = await runDeployChecks();
  for (const r of results) {
    console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name}`);
    for (const p of r.problems) console.log(`       - ${p}`);
    if (process.argv.includes('--verbose')) for (const n of r.notes ?? []) console.log(`       · ${n}`);
    else
      for (const n of (r.notes ?? []).filter((n) => n.includes('skipped') || n.includes('router')))
        console.log(`       · ${n}`);
  }
  const failed = results.filter((r) => !r.ok).length;
  console.log(`${results.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
