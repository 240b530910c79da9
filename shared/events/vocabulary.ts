/**
 * The event vocabulary: every kind name the seed lists, exactly, with its group.
 * `type` of an event, `filter-type` of a `message` trigger and the event log all use these.
 *
 * @example
 *   isEventType('job-staged'); // true
 *   kindOf('user-alert'); // 'user'
 */

export const EVENT_GROUPS = {
  /** Worker and license */
  workerAndLicense: [
    'worker-licensed',
    'worker-unlicensed',
    'license-state-changed',
    'license-validation-failed',
    'license-validation-ok',
    'license-volume-violation',
    'new-license',
  ],
  /** Variables */
  variables: ['variable', 'variable-deleted', 'update-variable'],
  /** Shutdown and coordination */
  shutdownAndCoordination: [
    'begin-shutting-down-job',
    'begin-shutting-down-server',
    'begin-shutting-down-worker',
    'override-job-coordinated-shutdown',
    'override-server-coordinated-shutdown',
    'override-worker-coordinated-shutdown',
    'shutdown-jobs',
    'shutdown-worker',
    'system-shutdown',
  ],
  /** Thread state and dependencies */
  threadStateAndDependencies: [
    'broadcast-job-thread-state',
    'broadcast-server-thread-state',
    'broadcast-worker-thread-state',
    'de-register-job-thread-dependency',
    'de-register-server-thread-dependency',
    'de-register-worker-thread-dependency',
    'register-job-thread-dependency',
    'register-server-thread-dependency',
    'register-worker-thread-dependency',
    'job-thread-state',
    'server-thread-state',
    'worker-thread-state',
  ],
  /** Checks and housekeeping */
  checksAndHousekeeping: [
    'check-job-report-time',
    'check-worker-report-time',
    'heart-beat',
    'initialise-internal-state',
    'initialise-job-states',
    'update-upstream-sync-for-job',
    'update-upstream-sync-for-worker',
    'message-serviced',
    'failed-to-service-message',
    'rerender-deployment',
    'context-changed',
  ],
  /** Job lifecycle and deployment */
  jobLifecycleAndDeployment: [
    'deployed-job-active',
    'deployed-job-removed',
    'deployed-job-should-be-running',
    'deployment-phase',
    'job-deploy-ready',
    'job-deployed',
    'job-initiated',
    'job-removing',
    'job-removed',
    'job-remove-failed',
    'job-remove-ready',
    'job-replaced',
    'job-required',
    'job-run-ended',
    'job-run-started',
    'job-started',
    'job-staged',
    'job-state-transition',
    'job-shutting-down',
    'job-stopping',
    'job-stopped',
    'job-unstaged',
    'job-updated',
    'job-killed',
    'job-finished',
    'job-idle',
    'job-is-processing',
    'job-timed-out',
    'run-job-failure',
  ],
  /** Job telemetry */
  jobTelemetry: [
    'job-batch-end',
    'job-backlog-update',
    'job-checkpoint-update',
    'job-document-end',
    'job-document-start',
    'job-errors',
    'job-execution-anomaly',
    'job-execution-status',
    'job-emit-custom',
    'job-logs',
    'job-metrics',
    'job-notifications',
    'job-runtime-error',
    'job-runtime-settings',
    'job-settings',
    'job-step-statistics',
    'job-suspicious-silence',
    'job-trace',
    'job-trace-requires-samples',
    'job-worker-comms-error',
  ],
  /** Job execution environment */
  jobExecutionEnvironment: [
    'job-running-docker',
    'job-running-script',
    'job-running-subprocess',
    'job-running-system-d',
  ],
  /** Server */
  server: [
    'server-logs',
    'server-metrics-batch',
    'server-started',
    'server-starting',
    'server-stopping',
    'server-worker-comms-error',
  ],
  /** User */
  user: ['user-alert', 'user-generated', 'user-notification'],
  /** Worker */
  worker: [
    'worker-command-for-job',
    'worker-auth-lease-ack',
    'worker-connected',
    'worker-created',
    'worker-debug-heart-beat',
    'worker-error',
    'worker-first-seen',
    'worker-heart-beat',
    'worker-logs',
    'worker-metrics-batch',
    'worker-offline',
    'worker-requests-auth-lease',
    'worker-server-comms-error',
    'worker-settings',
    'worker-shutdown',
    'worker-shutting-down',
    'worker-started',
    'worker-state-uuid',
    'worker-stopping',
    'worker-suspicious-silence',
    'worker-system-information',
    'worker-updated',
    'worker-modified',
    'worker-removed',
    'worker-aggregator-health',
    'aggregator-health',
    'worker-verification-token',
    'worker-requests-verification-token',
  ],
  /** Request/reply messages */
  requestReplyMessages: [
    'worker-wants-initial-settings',
    'worker-wants-initial-settings-reply',
    'worker-wants-deployed-jobs',
    'worker-wants-deployed-jobs-reply',
    'worker-wants-job-configuration',
    'worker-wants-job-configuration-reply',
    'job-wants-dslir-key',
    'job-wants-dslir-key-reply',
    'worker-wants-dslir-key',
    'worker-wants-dslir-key-reply',
    'job-wants-variables',
    'job-wants-variables-reply',
    'job-wants-credentials',
    'job-wants-credentials-reply',
    'job-wants-credentials-error',
    'job-wants-secret-variables-reply',
    'job-credentials-invalidated',
  ],
  /** Runtime artifacts (also valid as `filter-kind` values) */
  runtimeArtifacts: [
    'runtime-artifact-update',
    'runtime-artifact-update-ack',
    'runtime-artifact-clear',
    'runtime-artifact-clear-ack',
    'runtime-artifact-fetch',
    'runtime-artifact-fetch-reply',
    'runtime-artifact-fetch-error',
  ],
} as const;

export type EventGroup = keyof typeof EVENT_GROUPS;
export type EventType = (typeof EVENT_GROUPS)[EventGroup][number];

export const EVENT_TYPES: readonly EventType[] = Object.values(EVENT_GROUPS).flat();

const GROUP_OF = new Map<string, EventGroup>(
  (Object.entries(EVENT_GROUPS) as [EventGroup, readonly string[]][]).flatMap(([group, names]) =>
    names.map((name) => [name, group] as const),
  ),
);

export function isEventType(value: string): value is EventType {
  return GROUP_OF.has(value);
}

export function groupOf(type: EventType): EventGroup {
  return GROUP_OF.get(type)!;
}

/** The `filter-kind` values of a `message` trigger. */
export const EVENT_KINDS = [
  'system',
  'user',
  'runtime-artifact-fetch',
  'runtime-artifact-fetch-error',
  'runtime-artifact-clear',
  'runtime-artifact-clear-ack',
  'runtime-artifact-fetch-reply',
  'runtime-artifact-update',
  'runtime-artifact-update-ack',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** Which process generated an event: the `filter-source` values. */
export const EVENT_SOURCES = ['job', 'worker', 'server'] as const;
export type EventSource = (typeof EVENT_SOURCES)[number];

/** `user` for `user-*` types, the type itself for `runtime-artifact-*` types, else `system`. */
export function kindOf(type: EventType): EventKind {
  if (type.startsWith('user-')) return 'user';
  if (type.startsWith('runtime-artifact-')) return type as EventKind;
  return 'system';
}

/** An event as stored in the log and delivered to workers. */
export interface SluiceEvent {
  id: string;
  type: EventType;
  kind: EventKind;
  source: EventSource;
  worker?: string;
  job?: string;
  tags?: string[];
  /** RFC 3339 UTC. */
  time: string;
  payload: Record<string, unknown>;
}
