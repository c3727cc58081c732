// GatedStore: a store whose every call waits at two gates the test opens one at a time — the
// request (the write reaches the authority, and the cache hears of it at once) and the reply (the
// caller's promise settles). With the cache lagging (`lagging: true`) its events wait too, at a
// third kind of gate. Opening the gates in every possible order plays every interleaving a
// remote store (an API server and its informer) can produce for a few calls; `exploreOrders`
// does that.
//
// The records live in a FaultyMemoryStore (its authority and cache, AlreadyExists and NotFound),
// so the answers are a real store's; only their timing is the test's.
import type { IPAddressRecord, Store, StoreCache } from '../../adapters/store.ts';
import { FaultyMemoryStore } from './memory-store-faults.ts';

interface Gate {
  readonly label: string;
  open(): void;
}

export class GatedStore implements Store {
  readonly sync = null;
  readonly inner: FaultyMemoryStore;
  private readonly gates: Gate[] = [];

  constructor(options: { lagging?: boolean } = {}) {
    this.inner = new FaultyMemoryStore({ syncOps: false, cache: options.lagging ? 'manual' : 'sync' });
  }

  get cache(): StoreCache {
    return this.inner.cache;
  }

  /** The gates waiting now, by label ("create> 10.0.0.1", "create< 10.0.0.1 AlreadyExistsError", "events", …). */
  get waiting(): string[] {
    const labels = this.gates.map((g) => g.label);
    if (this.inner.pendingEvents > 0) labels.push('events');
    return labels;
  }

  /** Opens waiting gate `i` (an index into `waiting`): the last one, when the cache lags, delivers its events. */
  open(i: number): void {
    if (i === this.gates.length) {
      this.inner.flushCache();
      return;
    }
    this.gates.splice(i, 1)[0]!.open();
  }

  private gate(label: string): Promise<void> {
    return new Promise((resolve) => this.gates.push({ label, open: resolve }));
  }

  async create(record: IPAddressRecord): Promise<IPAddressRecord> {
    await this.gate(`create> ${record.name}`);
    let stored: IPAddressRecord | undefined;
    let error: unknown;
    try {
      stored = this.inner.createSync(record);
    } catch (e) {
      error = e;
    }
    await this.gate(`create< ${record.name}${error === undefined ? '' : ` ${(error as Error).name}`}`);
    if (error !== undefined) throw error;
    return stored!;
  }

  async delete(name: string): Promise<void> {
    await this.gate(`delete> ${name}`);
    let error: unknown;
    try {
      this.inner.deleteSync(name);
    } catch (e) {
      error = e;
    }
    await this.gate(`delete< ${name}${error === undefined ? '' : ` ${(error as Error).name}`}`);
    if (error !== undefined) throw error;
  }

  async get(name: string): Promise<IPAddressRecord | undefined> {
    return this.inner.getSync(name);
  }

  close(): void {
    this.inner.close();
  }
}

/** Lets every promise that can settle settle: microtasks all run before the next macrotask. */
export function quiesce(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Runs `play` once for every order in which the gates of its store calls can open (depth first;
 * each run starts afresh from `start`), `between` at every step (all gates shut, nothing else to
 * run), then `check` on the settled state, with the order taken as the run's name. Returns the
 * number of orders played. Throws after `limit` orders, so a program too large to explore fails
 * loudly instead of running for ever.
 */
export async function exploreOrders<T>(
  start: () => { store: GatedStore; state: T },
  play: (state: T) => Promise<unknown>[],
  check: (state: T, order: string[], outcomes: PromiseSettledResult<unknown>[]) => Promise<void>,
  between: (state: T, order: string[]) => void = () => {},
  limit = 20_000,
): Promise<number> {
  const todo: number[][] = [[]];
  let played = 0;
  while (todo.length > 0) {
    if (++played > limit) throw new Error(`more than ${limit} orders: explore a smaller program`);
    const prefix = todo.pop()!;
    const { store, state } = start();
    const outcomes = Promise.allSettled(play(state));
    const order: string[] = [];
    const choices: number[] = [];
    await quiesce();
    for (let step = 0; store.waiting.length > 0; step++) {
      const waiting = store.waiting;
      let choice = 0;
      if (step < prefix.length) choice = prefix[step]!;
      else for (let alt = 1; alt < waiting.length; alt++) todo.push([...choices, alt]);
      choices.push(choice);
      order.push(waiting[choice]!);
      store.open(choice);
      await quiesce();
      between(state, order);
    }
    await check(state, order, await outcomes);
    store.close();
  }
  return played;
}
