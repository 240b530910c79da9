/**
 * The `event-relay` function: Eventarc calls it for each document created under
 * `tenants/{tenant}/events/` (terraform/functions.tf), and it sends that event to the
 * workers whose message triggers can match it (functions/messaging/event-relay.ts).
 *
 * Firestore's CloudEvents carry the document as protobuf; the relay needs only its path,
 * which the `ce-document` (or `ce-subject`) header names, and reads the event from the log.
 * A failure answers 500, so Eventarc delivers the event again.
 *
 * The handler reads the request's headers, so it must be served as an HTTP function: the
 * platform may start a function that has an event trigger with the `cloudevent` signature
 * (FUNCTION_SIGNATURE_TYPE), which would call it with a parsed CloudEvent and no response.
 * `relayFunction` therefore registers it with the Functions Framework as an HTTP function
 * named `handler` (the entry point, terraform/functions.tf), and a registered function's
 * signature is the one the framework serves, whatever the platform asked for. Where the
 * framework is not installed (tests, the local stack) nothing is registered.
 *
 * @example
 *   export const handler = relayFunction();
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppDeps } from '../app/deps.ts';
import { eventsCollection } from '../events/event-log.ts';
import { eventFromStored, relayEvents } from '../messaging/event-relay.ts';
import { cloudDeps } from './http-function.ts';

/** The function's entry point (`entry_point` in terraform/functions.tf). */
export const RELAY_ENTRY_POINT = 'handler';

type RelayHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

interface FunctionsFramework {
  http(name: string, handler: RelayHandler): void;
}

/**
 * The Functions Framework that runs the archive (a dependency of every archive,
 * scripts/build.ts), loaded before the entry module's body runs: the framework looks for a
 * registered function as soon as it has imported the module. The name is a variable so that
 * TypeScript does not look for the package, which only the deployed archive installs.
 */
const FRAMEWORK_PACKAGE = '@google-cloud/functions-framework';
const framework = (await import(FRAMEWORK_PACKAGE).catch(() => undefined)) as FunctionsFramework | undefined;

const EVENT_DOCUMENT = /^(?:documents\/)?tenants\/([^/]+)\/events\/([^/]+)$/;

/** The tenant and event id of a Firestore CloudEvent, from its headers. */
export function eventDocumentOf(
  headers: IncomingMessage['headers'],
): { tenant: string; id: string } | undefined {
  for (const name of ['ce-document', 'ce-subject']) {
    const value = headers[name];
    const match = typeof value === 'string' ? EVENT_DOCUMENT.exec(value) : null;
    if (match) return { tenant: decodeURIComponent(match[1]!), id: decodeURIComponent(match[2]!) };
  }
  return undefined;
}

export function relayFunction(deps: AppDeps = cloudDeps(), functions = framework): RelayHandler {
  const handler: RelayHandler = async (req, res) => {
    const where = eventDocumentOf(req.headers);
    if (!where) {
      // Not an event document: nothing to retry.
      deps.logger.warn(
        { subject: req.headers['ce-subject'] },
        'event relay called for something that is not an event',
      );
      return reply(res, 204);
    }
    try {
      const db = await deps.clients.firestore();
      const snap = await eventsCollection(db, where.tenant).doc(where.id).get();
      // Gone already (expired): no trigger can want it any more.
      if (snap.exists) await relayEvents(deps, where.tenant, [eventFromStored(snap.data()!)]);
      reply(res, 204);
    } catch (err) {
      deps.logger.error({ err, event: where.id }, 'relaying an event failed; Eventarc will retry');
      reply(res, 500);
    }
  };
  functions?.http(RELAY_ENTRY_POINT, handler);
  return handler;
}

function reply(res: ServerResponse, status: number): void {
  res.writeHead(status);
  res.end();
}
