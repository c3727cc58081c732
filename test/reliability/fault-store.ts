// FaultStore: a test-only Store that wraps any Store (MemoryStore, KubernetesStore) and injects
// the failures a real API server and informer produce, at seeded random points.
//
//   allocator ──► FaultStore.create/delete ──► inner store (the authority)
//        ▲              │ faults before / after the inner call
//        │              ▼
//        └──── FaultCache (the allocator's informer view) ◄── inner.cache events
//                  │ drops events; relist() delivers the differences (an informer restart)
//
// Faults (each counted in `injected`):
//   create-fails      reject before the inner create: nothing stored (HTTP 500 / timeout before send)
//   create-lost-reply the inner create succeeds, the caller gets an error (reply lost on the wire)
//   delete-fails      reject before the inner delete: the record stays
//   delete-lost-reply the inner delete succeeds, the caller gets an error
//   drop-event        a cache event is not delivered (watch dropped; the view is stale until relist)
//   unsynced          hasSynced() answers false until the next relist (informer restarting)
//
// Invariant (what relist() re-establishes): after relist(), the view holds exactly the inner
// cache's records, and every subscriber has been told the differences in order — the contract of
// StoreCache.subscribe after a re-list.
import type { IPAddressRecord, Store, StoreCache, StoreWatcher } from '../../adapters/store.ts';
import type { Driver } from './driver.ts';

export type FaultKind = 'create-fails' | 'create-lost-reply' | 'delete-fails' | 'delete-lost-reply' | 'drop-event' | 'unsynced';

/** Per-call probabilities in percent (0 = never). */
export type FaultRates = Partial<Record<FaultKind, number>>;

/** The error a faulted call rejects with (like a 500 or a reset connection: not AlreadyExists). */
export class InjectedFault extends Error {
  constructor(
    readonly kind: FaultKind,
    name: string,
  ) {
    super(`injected ${kind} for ${JSON.stringify(name)}`);
    this.name = 'InjectedFault';
  }
}

function sameVersion(a: IPAddressRecord, b: IPAddressRecord): boolean {
  return a.uid === b.uid && a.resourceVersion === b.resourceVersion;
}

class FaultCache implements StoreCache {
  readonly view = new Map<string, IPAddressRecord>();
  /** One entry per subscribe() call (the same watcher subscribed twice is two), as a StoreCache keeps them. */
  private readonly subscriptions = new Set<{ readonly watcher: StoreWatcher }>();
  synced = true;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly inner: StoreCache,
    private readonly shouldDrop: () => boolean,
  ) {
    this.unsubscribe = inner.subscribe({
      onAdd: (r) => {
        if (this.shouldDrop()) return;
        const previous = this.view.get(r.name);
        this.view.set(r.name, r);
        this.emit((w) => w.onAdd(r, previous));
      },
      onDelete: (r) => {
        if (this.shouldDrop()) return;
        const last = this.view.get(r.name);
        if (last === undefined) return;
        this.view.delete(r.name);
        this.emit((w) => w.onDelete(last));
      },
    });
  }

  get(name: string): IPAddressRecord | undefined {
    return this.view.get(name);
  }

  list(labels?: Readonly<Record<string, string>>): IPAddressRecord[] {
    const out: IPAddressRecord[] = [];
    outer: for (const r of this.view.values()) {
      if (labels !== undefined) for (const k in labels) if (r.labels[k] !== labels[k]) continue outer;
      out.push(r);
    }
    return out;
  }

  get size(): number {
    return this.view.size;
  }

  hasSynced(): boolean {
    return this.synced && this.inner.hasSynced();
  }

  subscribe(watcher: StoreWatcher): () => void {
    for (const r of [...this.view.values()]) watcher.onAdd(r);
    const sub = { watcher };
    this.subscriptions.add(sub);
    return () => {
      this.subscriptions.delete(sub);
    };
  }

  /** Gives an event to the subscriptions current when it started, but not to one ended since. */
  private emit(give: (watcher: StoreWatcher) => void): void {
    for (const sub of [...this.subscriptions]) if (this.subscriptions.has(sub)) give(sub.watcher);
  }

  /** An informer restart: deliver the differences between the view and the inner cache. */
  relist(): { added: number; deleted: number } {
    const now = new Map<string, IPAddressRecord>();
    for (const r of this.inner.list()) now.set(r.name, r);
    let added = 0;
    let deleted = 0;
    for (const [name, r] of [...this.view]) {
      if (!now.has(name)) {
        this.view.delete(name);
        deleted++;
        this.emit((w) => w.onDelete(r));
      }
    }
    for (const [name, r] of now) {
      const old = this.view.get(name);
      if (old === undefined || !sameVersion(old, r)) {
        this.view.set(name, r);
        added++;
        this.emit((w) => w.onAdd(r, old));
      }
    }
    this.synced = true;
    this.emit((w) => w.onResync?.());
    return { added, deleted };
  }

  close(): void {
    this.unsubscribe();
  }
}

export class FaultStore implements Store {
  readonly cache: FaultCache;
  /** Faults injected so far, by kind. */
  readonly injected: Record<FaultKind, number> = {
    'create-fails': 0,
    'create-lost-reply': 0,
    'delete-fails': 0,
    'delete-lost-reply': 0,
    'drop-event': 0,
    unsynced: 0,
  };
  /** Set false to stop injecting (the end of a run: let everything converge). */
  enabled = true;

  constructor(
    readonly inner: Store,
    private readonly driver: Driver,
    public rates: FaultRates,
  ) {
    this.cache = new FaultCache(inner.cache, () => this.roll('drop-event'));
  }

  private roll(kind: FaultKind): boolean {
    const p = this.rates[kind] ?? 0;
    if (!this.enabled || p <= 0 || !this.driver.percent(p)) return false;
    this.injected[kind]++;
    return true;
  }

  /** Total faults injected. */
  get totalInjected(): number {
    let n = 0;
    for (const k in this.injected) n += this.injected[k as FaultKind];
    return n;
  }

  async create(record: IPAddressRecord): Promise<IPAddressRecord> {
    if (this.roll('create-fails')) throw new InjectedFault('create-fails', record.name);
    const lost = this.roll('create-lost-reply');
    const out = await this.inner.create(record);
    if (lost) throw new InjectedFault('create-lost-reply', record.name);
    return out;
  }

  async delete(name: string): Promise<void> {
    if (this.roll('delete-fails')) throw new InjectedFault('delete-fails', name);
    const lost = this.roll('delete-lost-reply');
    await this.inner.delete(name);
    if (lost) throw new InjectedFault('delete-lost-reply', name);
  }

  get(name: string): Promise<IPAddressRecord | null | undefined> {
    return this.inner.get(name);
  }

  /** Maybe take the informer down (hasSynced false until relist). */
  maybeUnsync(): void {
    if (this.roll('unsynced')) this.cache.synced = false;
  }

  /** An informer restart: resync the view with the inner cache. */
  relist(): { added: number; deleted: number } {
    return this.cache.relist();
  }

  close(): void {
    this.cache.close();
  }
}
