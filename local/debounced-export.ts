/**
 * Exports the Firestore emulator soon after every write, so a crash of the local stack
 * (kill -9, a power cut) loses at most the last second or so of writes, not everything
 * since the last 30-second export. Writes within `delayMs` of each other share one
 * export; exports never overlap (a write during an export schedules one more after it).
 *
 * @example
 *   const exports = debouncedExport(() => google.exportFirestore(projectId), 500, onError);
 *   exports.schedule();   // after a write
 *   await exports.flush(); // on stop
 */

export interface DebouncedExport {
  /** A write happened: export within `delayMs` (or right after the export now running). */
  schedule(): void;
  /** Waits for a scheduled or running export, then runs none until the next `schedule`. */
  flush(): Promise<void>;
  /** Stops scheduling; a running export still finishes. */
  stop(): void;
}

export function debouncedExport(
  run: () => Promise<void>,
  delayMs: number,
  onError: (err: unknown) => void,
): DebouncedExport {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  const start = (): Promise<void> => {
    timer = undefined;
    running = run()
      .catch(onError)
      .finally(() => {
        running = undefined;
        if (again && !stopped) {
          again = false;
          arm();
        }
      });
    return running;
  };
  const arm = () => {
    if (timer || stopped) return;
    timer = setTimeout(start, delayMs);
    timer.unref();
  };

  return {
    schedule() {
      if (running) again = true;
      else arm();
    },
    async flush() {
      if (timer) {
        clearTimeout(timer);
        await start();
      }
      while (running) await running;
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
