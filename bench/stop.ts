// The signals that stop a bench run (Ctrl-C, a kill, a closed terminal), and how a run tells a
// child process they ended from a child that failed. A terminal sends Ctrl-C to the whole process
// group: a child (a --baseline's WASM build, the Go program) may die of it before the run's own
// handler runs, and its failure is then the interrupt, not an error of the run.

/** Each stop signal with its number: a run it stops exits with 128 + that number. */
export const STOP_SIGNALS = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 } as const;

export type StopSignal = keyof typeof STOP_SIGNALS;

function isStopSignal(s: unknown): s is StopSignal {
  return typeof s === 'string' && Object.hasOwn(STOP_SIGNALS, s);
}

/**
 * The stop signal that ended the child process behind `e`, if one did: the `signal` of a
 * child_process error (execFileSync's, or a Go session's), on `e` or along its `cause` chain.
 */
export function stopSignalOf(e: unknown): StopSignal | undefined {
  for (let at = e, depth = 0; typeof at === 'object' && at !== null && depth < 8; depth++) {
    const { signal, cause } = at as { signal?: unknown; cause?: unknown };
    if (isStopSignal(signal)) return signal;
    at = cause;
  }
  return undefined;
}
