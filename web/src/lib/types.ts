/** The API's answers the pages read (CONTRACT sections 1, 2, 4). No DOM here: tests import it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type ContextMap = Record<string, JsonValue>;

export interface Worker {
  id: string;
  labels: Record<string, string>;
  state: 'online' | 'offline';
  last_seen: string | null;
  built_in: boolean;
  jobs: string[];
  created_at: string | null;
}

export interface Deployment {
  worker: string;
  state: string;
  version: number;
  updated_at: string;
}

export interface JobSummary {
  name: string;
  version: number;
  state: 'saved' | 'staged' | 'deployed';
  staged_version: number | null;
  deployments: Deployment[];
  updated_at: string;
}

export interface Identity {
  subject: string;
  kind: string;
  tenant: string;
  roles: string[];
  issued_at: string;
  expires_at: string;
}
