// The interfaces a user implements — Store, StoreCache, SyncStoreOps, ServiceCIDRSource — as a
// user writes them: classes with their own private fields and no `this` parameter, an object
// literal of arrow functions, an object literal of methods. Each must type-check: the
// interfaces' methods declare `this: object` (a method taken off an object typed by the
// interface is refused), and that must not reach into the implementations. test/user-
// implementations.test.ts compiles this file under the package's strictest options and runs
// `useThem`; `npm run typecheck` checks it too.
import {
  Allocator,
  AlreadyExistsError,
  type IPAddressRecord,
  InMemoryServiceCIDRs,
  MemoryStore,
  MetaAllocator,
  NotFoundError,
  type ServiceCIDR,
  type ServiceCIDRSource,
  type ServiceCIDRWatcher,
  type Store,
  type StoreCache,
  type StoreWatcher,
  type SyncStoreOps,
} from '../../adapters/index.ts';

/** A store of one's own: a class with private fields, its cache an object literal of arrow functions. */
export class MapStore implements Store {
  #records = new Map<string, IPAddressRecord>();
  #watchers = new Set<StoreWatcher>();

  async create(record: IPAddressRecord): Promise<IPAddressRecord> {
    return this.createSync(record);
  }
  async delete(name: string): Promise<void> {
    this.deleteSync(name);
  }
  async get(name: string): Promise<IPAddressRecord | undefined> {
    return this.#records.get(name);
  }
  readonly cache: StoreCache = {
    get: (name) => this.#records.get(name),
    list: () => [...this.#records.values()],
    hasSynced: () => true,
    subscribe: (watcher) => {
      for (const r of this.#records.values()) watcher.onAdd(r);
      this.#watchers.add(watcher);
      return () => this.#watchers.delete(watcher);
    },
  };
  readonly sync: SyncStoreOps = this;
  createSync(record: IPAddressRecord): IPAddressRecord {
    if (this.#records.has(record.name)) throw new AlreadyExistsError(record.name);
    this.#records.set(record.name, record);
    for (const w of this.#watchers) w.onAdd(record);
    return record;
  }
  deleteSync(name: string): void {
    const record = this.#records.get(name);
    if (record === undefined) throw new NotFoundError(name);
    this.#records.delete(name);
    for (const w of this.#watchers) w.onDelete(record);
  }
  getSync(name: string): IPAddressRecord | undefined {
    return this.#records.get(name);
  }
  close(): void {
    this.#watchers.clear();
  }
}

/** A cache as an object literal of methods, over a store of the package's. */
export function cacheOver(store: MemoryStore): StoreCache {
  return {
    get(name) {
      return store.cache.get(name);
    },
    list(labels) {
      return store.cache.list(labels);
    },
    hasSynced() {
      return true;
    },
    subscribe(watcher) {
      return store.cache.subscribe(watcher);
    },
  };
}

/**
 * A store as an object literal of methods. One of its methods reads `this`: an object literal's
 * method is given the interface's `this: object`, so it says which `this` it reads.
 */
export function storeOver(store: MemoryStore): Store {
  return {
    cache: cacheOver(store),
    create(record) {
      return store.create(record);
    },
    delete(name) {
      return store.delete(name);
    },
    async get(this: Store, name) {
      return this.cache.get(name) ?? (await store.get(name));
    },
    close() {},
  };
}

/** A ServiceCIDR source of one's own: a class with a private field, no `this` parameter. */
export class FixedServiceCIDRs implements ServiceCIDRSource {
  readonly #cidrs: ServiceCIDR[];
  constructor(...cidrs: string[]) {
    this.#cidrs = cidrs.map((cidr, i) => ({ name: `range-${i}`, cidrs: [cidr] }));
  }
  subscribe(watcher: ServiceCIDRWatcher): () => void {
    for (const sc of this.#cidrs) watcher.onAdd(sc);
    return () => {};
  }
  hasSynced(): boolean {
    return true;
  }
  list(): ServiceCIDR[] {
    return [...this.#cidrs];
  }
}

/** The same as an object literal of methods. */
export const oneServiceCIDR: ServiceCIDRSource = {
  subscribe(watcher) {
    watcher.onAdd({ name: 'one', cidrs: ['10.3.0.0/29'] });
    return () => {};
  },
  hasSynced() {
    return true;
  },
  list() {
    return [{ name: 'one', cidrs: ['10.3.0.0/29'] }];
  },
};

/**
 * Allocates through each of them, and returns the addresses it was given. A method taken off an
 * object typed by an interface is a type error (the `@ts-expect-error` lines: each is an error,
 * or the check of this file fails), as it is for the package's classes.
 */
export async function useThem(): Promise<string[]> {
  const given: string[] = [];
  const mine = new MapStore();
  const memory = new MemoryStore();
  const stores: Store[] = [mine, storeOver(memory)];
  for (const store of stores) {
    const a = new Allocator('10.1.0.0/29', { store });
    given.push(await a.allocateNext());
    a.destroy();
  }
  for (const source of [new FixedServiceCIDRs('10.2.0.0/29'), oneServiceCIDR, new InMemoryServiceCIDRs()]) {
    const meta = new MetaAllocator('IPv4', source, { store: memory });
    if (source.list().length > 0) given.push(await meta.allocateNext());
    meta.destroy();
  }
  const store: Store = memory;
  const { get } = store;
  const { list } = store.cache;
  const { getSync } = memory.sync as SyncStoreOps;
  const { hasSynced } = oneServiceCIDR as ServiceCIDRSource;
  const unbound = () => [
    // @ts-expect-error a method taken off its object: `this` is void
    get('10.1.0.1'),
    // @ts-expect-error a method taken off its object: `this` is void
    list(),
    // @ts-expect-error a method taken off its object: `this` is void
    getSync('10.1.0.1'),
    // @ts-expect-error a method taken off its object: `this` is void
    hasSynced(),
  ];
  void unbound; // never called: the types are what is checked
  store.close();
  mine.close();
  return given;
}
