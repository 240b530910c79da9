/**
 * The emulators start on free ports, chosen a moment before they bind them: another
 * process starting at the same time can take a port in between (a CI run saw the
 * Firestore emulator fail with a BindException). They then start on ports chosen again.
 */

import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { expect, it } from 'vitest';
import { startGoogleEmulators } from '../../local/google-emulators.ts';
import { freePort } from '../../local/processes.ts';

it('start on other ports when a chosen one was taken before they could bind it', async () => {
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  const taken = (squatter.address() as AddressInfo).port;
  const chosen: number[] = [];
  // The first port chosen is the squatter's, as if it had been taken after being chosen.
  const pickPort = async (host: string) => {
    const port = chosen.length === 0 ? taken : await freePort(host);
    chosen.push(port);
    return port;
  };
  try {
    const emulators = await startGoogleEmulators({ reuseFromEnv: false, pickPort });
    try {
      expect(chosen[0]).toBe(taken);
      expect(chosen.length).toBe(4);
      expect([emulators.firestoreHost, emulators.pubsubHost]).not.toContain(`127.0.0.1:${taken}`);
      const res = await fetch(`http://${emulators.firestoreHost}/`);
      expect(res.ok).toBe(true);
    } finally {
      await emulators.stop();
    }
  } finally {
    squatter.close();
  }
}, 120_000);
