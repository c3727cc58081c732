// What the informer reports to its owner: its state, told to every listener on each change and
// on each failure; and its first sync, awaited through waitForSync.
//
//   syncing ──► synced ⇄ relisting        (any) ── stop() ──► stopped, told once; nothing follows

export type InformerState = 'syncing' | 'synced' | 'relisting' | 'stopped';

/** @internal */
export type StateListener = (state: InformerState, error?: Error) => void;

/** @internal */
export class StateReporter {
  private current: InformerState = 'syncing';
  private readonly listeners = new Set<StateListener>();

  /** `reportThrown`: told what a listener throws (the owner's onWatcherError), which stops nothing. */
  constructor(private readonly reportThrown: (err: unknown) => void) {}

  get state(): InformerState {
    return this.current;
  }

  /** Adds a listener; returns the unsubscriber. */
  listen(listener: StateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Moves to `state`, telling the listeners when it changed or an error comes with it; 'stopped' is final. */
  set(state: InformerState, error?: Error): void {
    if (this.current === 'stopped') return;
    const changed = this.current !== state;
    this.current = state;
    if (!changed && error === undefined) return;
    for (const l of [...this.listeners]) {
      try {
        l(state, error);
      } catch (err) {
        // a listener's failure must not stop the informer, nor go unseen
        try {
          this.reportThrown(err);
        } catch {
          // nor may the report's own: the informer's loop calls set()
        }
      }
    }
  }

  /** Lets go of the listeners (after 'stopped' was told). */
  clear(): void {
    this.listeners.clear();
  }
}

/**
 * The promises waitForSync has handed out and not yet settled. Each leaves no timer or abort
 * listener behind, whichever way it settles.
 * @internal
 */
export class SyncWaiters {
  private readonly waiting = new Set<{ resolve: () => void; reject: (e: unknown) => void }>();

  /**
   * A promise settled by resolveAll() or rejectAll(), with `signal.reason` when the signal
   * aborts, or with timedOut() after `timeoutMs` (undefined or Infinity: no limit).
   */
  add(timeoutMs: number | undefined, signal: AbortSignal | undefined, timedOut: () => Error): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = () => waiter.reject(signal!.reason);
      const settle = () => {
        this.waiting.delete(waiter);
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter = {
        resolve: () => {
          settle();
          resolve();
        },
        reject: (e: unknown) => {
          settle();
          reject(e);
        },
      };
      this.waiting.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined && timeoutMs !== Infinity) {
        timer = setTimeout(() => waiter.reject(timedOut()), timeoutMs);
      }
    });
  }

  /** The first list is applied: every waiter resolves. */
  resolveAll(): void {
    for (const w of [...this.waiting]) w.resolve();
  }

  /** The informer stopped: every waiter rejects with an error of its own. */
  rejectAll(error: () => Error): void {
    for (const w of [...this.waiting]) w.reject(error());
  }
}
