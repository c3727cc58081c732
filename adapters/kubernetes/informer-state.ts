// What the informer reports to its owner: its state, told to every listener on each change and
// on each failure.
//
//   syncing ──► synced ⇄ relisting        (any) ── stop() ──► stopped, told once; nothing follows

export type InformerState = 'syncing' | 'synced' | 'relisting' | 'stopped';

export type StateListener = (state: InformerState, error?: Error) => void;

export class StateReporter {
  private current: InformerState = 'syncing';
  private readonly listeners = new Set<StateListener>();

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
      } catch {
        // a listener's failure must not stop the informer
      }
    }
  }

  /** Lets go of the listeners (after 'stopped' was told). */
  clear(): void {
    this.listeners.clear();
  }
}
