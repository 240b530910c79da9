/**
 * Limits of the worker API, shared by the routes that check them and the worker runtime that
 * keeps within them. A request over one is refused whole (400), and sending it again cannot
 * help: a heartbeat refused for one job's long error left the worker looking offline while it
 * ran, a run that finished more objects than a commit takes was read again, and a job using
 * more secrets than one request resolves never ran.
 */

/**
 * The most characters of a deployment's `error`: what a heartbeat (`POST /api/worker/heartbeat`)
 * carries of a job's error, and what is kept of any worker's, the `cloud` worker's included.
 */
export const DEPLOYMENT_ERROR_MAX_CHARS = 2_000;

/** The most keys one `POST /api/worker/fingerprints/check|commit` takes. */
export const FINGERPRINT_KEYS_PER_REQUEST = 1_000;

/** The most reports one `POST /api/worker/events` takes. */
export const REPORTS_PER_REQUEST = 500;

/** The most secret references one `POST /api/worker/secrets/resolve` takes. */
export const SECRET_REFS_PER_REQUEST = 100;

/** The most job states one heartbeat carries. */
export const HEARTBEAT_JOBS_PER_REQUEST = 1_000;

/** What a worker puts in one heartbeat at most: half the API's 1 MiB body limit, room to spare. */
export const HEARTBEAT_PART_BYTES = 512 * 1024;
