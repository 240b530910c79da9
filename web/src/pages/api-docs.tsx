/**
 * API reference at /api/docs, rendered in the browser from /api/openapi.json (no CDN,
 * nothing fetched from elsewhere): operations grouped by tag with their parameters,
 * request body and responses, and every named schema, with links between them.
 */
import type { ComponentChildren } from 'preact';
import { ErrorMessage } from '../components/error-message.tsx';
import { TableHead } from '../components/table.tsx';
import { useApi } from '../lib/use-api.ts';

type Schema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  default?: unknown;
  nullable?: boolean;
};
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}
interface Content {
  [mediaType: string]: { schema?: Schema };
}
interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; description?: string; content?: Content };
  responses?: Record<string, { description?: string; content?: Content }>;
}
interface OpenApi {
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

export function ApiDocsPage() {
  const doc = useApi<OpenApi>('/api/openapi.json');
  if (doc.error) return <ErrorMessage error={doc.error} />;
  if (!doc.data) return <p>Loading the API reference…</p>;
  const d = doc.data;
  const ops = Object.entries(d.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ path, method: m, op: item[m]! })),
  );
  const tags = [...new Set(ops.map((o) => o.op.tags?.[0] ?? 'other'))];
  const schemas = Object.entries(d.components?.schemas ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <div class="api-docs">
      <h1>
        {d.info.title} <span class="badge">v{d.info.version}</span>
      </h1>
      {d.info.description && <p class="lead">{d.info.description}</p>}
      <p>
        The machine-readable document is <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.1).
      </p>
      <nav aria-label="API operations" class="toc">
        {tags.map((tag) => (
          <div key={tag}>
            <h2 class="toc-tag">{tag}</h2>
            <ul>
              {ops
                .filter((o) => (o.op.tags?.[0] ?? 'other') === tag)
                .map((o) => (
                  <li key={`${o.method} ${o.path}`}>
                    <a href={`#${opId(o.method, o.path)}`}>
                      <span class={`method method-${o.method}`}>{o.method.toUpperCase()}</span> {o.path}
                    </a>
                  </li>
                ))}
            </ul>
          </div>
        ))}
        <div>
          <h2 class="toc-tag">schemas</h2>
          <ul>
            {schemas.map(([name]) => (
              <li key={name}>
                <a href={`#schema-${name}`}>{name}</a>
              </li>
            ))}
          </ul>
        </div>
      </nav>
      {ops.map((o) => (
        <OperationView key={`${o.method} ${o.path}`} method={o.method} path={o.path} op={o.op} />
      ))}
      <h2>Schemas</h2>
      {schemas.map(([name, schema]) => (
        <section key={name} id={`schema-${name}`} class="schema" aria-labelledby={`schema-${name}-h`}>
          <h3 id={`schema-${name}-h`}>{name}</h3>
          <SchemaView schema={schema} />
        </section>
      ))}
    </div>
  );
}

function OperationView({ method, path, op }: { method: string; path: string; op: Operation }) {
  const id = opId(method, path);
  return (
    <section class="operation" id={id} aria-labelledby={`${id}-h`}>
      <h3 id={`${id}-h`}>
        <span class={`method method-${method}`}>{method.toUpperCase()}</span> <code>{path}</code>
      </h3>
      {op.summary && <p>{op.summary}</p>}
      {op.description && <p class="hint">{op.description}</p>}
      <p class="hint">{op.security?.length ? 'Needs a bearer token or a session.' : 'No authentication.'}</p>
      {op.parameters && op.parameters.length > 0 && (
        <table>
          <caption>Parameters</caption>
          <TableHead columns={['Name', 'In', 'Required', 'Schema']} />
          <tbody>
            {op.parameters.map((p) => (
              <tr key={`${p.in}:${p.name}`}>
                <th scope="row">
                  <code>{p.name}</code>
                </th>
                <td>{p.in}</td>
                <td>{p.required ? 'yes' : 'no'}</td>
                <td>
                  {p.schema && <SchemaView schema={p.schema} />}
                  {p.description && <span class="hint"> {p.description}</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {op.requestBody && (
        <Block title={`Request body${op.requestBody.required ? '' : ' (optional)'}`}>
          {op.requestBody.description && <p class="hint">{op.requestBody.description}</p>}
          <ContentView content={op.requestBody.content} />
        </Block>
      )}
      <Block title="Responses">
        <dl class="responses">
          {Object.entries(op.responses ?? {}).map(([status, r]) => (
            <div key={status}>
              <dt>
                <span class={`status-code status-${status[0]}xx`}>{status}</span> {r.description}
              </dt>
              <dd>
                <ContentView content={r.content} />
              </dd>
            </div>
          ))}
        </dl>
      </Block>
    </section>
  );
}

function Block({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <div class="block">
      <h4>{title}</h4>
      {children}
    </div>
  );
}

function ContentView({ content }: { content: Content | undefined }) {
  if (!content) return null;
  return (
    <>
      {Object.entries(content).map(([type, media]) => (
        <div key={type}>
          <span class="media-type">{type}</span> {media.schema && <SchemaView schema={media.schema} />}
        </div>
      ))}
    </>
  );
}

/** A schema as a readable type: references link to their schema, objects list their properties. */
export function SchemaView({ schema, depth = 0 }: { schema: Schema; depth?: number }) {
  if (schema.$ref) {
    const name = schema.$ref.split('/').pop()!;
    return <a href={`#schema-${name}`}>{name}</a>;
  }
  if (depth > 8) return <span>…</span>;
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) {
    return (
      <span>
        one of{' '}
        {alternatives.map((s, i) => (
          <span key={String(i)}>
            {i > 0 && ' | '}
            <SchemaView schema={s} depth={depth + 1} />
          </span>
        ))}
      </span>
    );
  }
  if (schema.allOf) {
    return (
      <span>
        {schema.allOf.map((s, i) => (
          <span key={String(i)}>
            {i > 0 && ' & '}
            <SchemaView schema={s} depth={depth + 1} />
          </span>
        ))}
      </span>
    );
  }
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : schema.type;
  if (schema.properties) {
    const required = new Set(schema.required ?? []);
    return (
      <span>
        object
        {schema.description && <span class="hint"> — {schema.description}</span>}
        <ul class="props">
          {Object.entries(schema.properties).map(([name, prop]) => (
            <li key={name}>
              <code>{name}</code>
              {required.has(name) ? <abbr title="required">*</abbr> : ''}:{' '}
              <SchemaView schema={prop} depth={depth + 1} />
            </li>
          ))}
        </ul>
      </span>
    );
  }
  if (type === 'array' && schema.items) {
    return (
      <span>
        array of <SchemaView schema={schema.items} depth={depth + 1} />
      </span>
    );
  }
  if (typeof schema.additionalProperties === 'object') {
    return (
      <span>
        map of string → <SchemaView schema={schema.additionalProperties} depth={depth + 1} />
      </span>
    );
  }
  const facts = [
    schema.format,
    schema.enum ? `one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}` : undefined,
    schema.const !== undefined ? `= ${JSON.stringify(schema.const)}` : undefined,
    schema.pattern ? `pattern ${schema.pattern}` : undefined,
    schema.minimum !== undefined ? `≥ ${schema.minimum}` : undefined,
    schema.maximum !== undefined ? `≤ ${schema.maximum}` : undefined,
    schema.maxLength !== undefined ? `at most ${schema.maxLength} chars` : undefined,
    schema.default !== undefined ? `default ${JSON.stringify(schema.default)}` : undefined,
  ].filter(Boolean);
  return (
    <span>
      <span class="type">{type ?? (schema.additionalProperties ? 'object' : 'any')}</span>
      {facts.length > 0 && <span class="hint"> ({facts.join('; ')})</span>}
      {schema.description && <span class="hint"> — {schema.description}</span>}
    </span>
  );
}

function opId(method: string, path: string): string {
  return `op-${method}-${path.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}`;
}
