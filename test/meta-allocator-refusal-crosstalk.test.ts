// MetaAllocator.allocate(ip) goes on to another range when its range left allocation during its
// own call (its strategy deleted or marked its ServiceCIDR). A refusal of another call made
// meanwhile (here, an allocateNext started from the store's create) is not this call's: the
// address this call created is its answer.
import { describe, expect, it, onTestFinished } from 'vitest';
import { MetaAllocator } from '../adapters/meta-allocator.ts';
import { MemoryStore } from '../adapters/memory-store.ts';
import { InMemoryServiceCIDRs } from '../adapters/service-cidrs.ts';
import { STRATEGIES } from '../adapters/builtin-strategies.ts';
import type { AllocationStrategy } from '../adapters/strategy.ts';
import type { IPAddressRecord, Store } from '../adapters/store.ts';
import { settle } from './helpers.ts';

describe('MetaAllocator.allocate(ip) and a refusal that belongs to another call', () => {
  it.each([true, false])(
    'a store whose create starts an allocateNext that marks the range for deletion: allocate either succeeds or leaves no record (syncOps %s)',
    async (syncOps) => {
      const source = new InMemoryServiceCIDRs();
      source.addServiceCIDR('a', ['10.96.0.0/28']);
      source.addServiceCIDR('b', ['10.97.0.0/28']);
      let armed = false;
      const strategy: AllocationStrategy = {
        name: 'marks a for deletion when armed',
        forRange(view) {
          const inner = STRATEGIES['lowest-free'].forRange(view);
          return {
            choose(out) {
              if (armed) {
                armed = false;
                source.markDeleting('a');
              }
              return inner.choose(out);
            },
          };
        },
      };
      const inner = new MemoryStore({ syncOps });
      let meta: MetaAllocator | undefined;
      let nested: Promise<string | Error> | undefined;
      let started = false;
      // the store's create starts another allocation once, as a watcher run from it might
      const startNested = () => {
        if (started || meta === undefined) return;
        started = true;
        armed = true;
        nested = settle(meta.allocateNext());
      };
      const sync = inner.sync;
      const store: Store = {
        create: (r) => {
          startNested();
          return inner.create(r);
        },
        delete: (name) => inner.delete(name),
        get: (name) => inner.get(name),
        cache: inner.cache,
        close: () => inner.close(),
        sync:
          sync == null
            ? null
            : {
                createSync: (r: IPAddressRecord) => {
                  startNested();
                  return sync.createSync(r);
                },
                deleteSync: (name: string) => sync.deleteSync(name),
                getSync: (name: string) => sync.getSync(name),
              },
      };
      meta = new MetaAllocator('IPv4', source, { store, policy: 'ordered', strategy });
      onTestFinished(() => meta?.destroy());

      const outcome = await settle(meta.allocate('10.96.0.3'));
      expect(typeof (await nested)).toBe('string'); // the other call got an address
      const held = inner.records().some((r) => r.name === '10.96.0.3');
      // a rejected allocate must leave the address free; a record created means it succeeded
      expect({ rejected: outcome instanceof Error, held, used: meta.used() }).toEqual({ rejected: !held, held, used: held ? 2 : 1 });
    },
  );
});
