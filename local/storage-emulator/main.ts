/**
 * Runs the storage emulator on its own:
 *   npx tsx local/storage-emulator/main.ts --port 9023 [--gcs-dir DIR]
 */
import { parseArgs } from 'node:util';
import { startStorageEmulator } from './index.ts';

const { values } = parseArgs({
  options: { port: { type: 'string' }, 'gcs-dir': { type: 'string' }, host: { type: 'string' } },
});
const emulator = await startStorageEmulator({
  port: Number(values.port ?? 9023),
  ...(values.host ? { host: values.host } : {}),
  ...(values['gcs-dir'] ? { dir: values['gcs-dir'] } : {}),
});
console.log(`STORAGE_EMULATOR_HOST=${emulator.url}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => void emulator.stop().then(() => process.exit(0)));
