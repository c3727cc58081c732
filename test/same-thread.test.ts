// structuredClone, which postMessage applies to its message (worker_threads, MessagePort, Deno's
// Worker), cannot copy a Range, an allocator or a store: each holds WASM memory or a store's
// connections that live in the thread that made it. Each refuses at once, with a DataCloneError
// that says so — not naming the first internal function the copy met (`allocation() { } could not
// be cloned.`, a function of client-node's for an allocator on a KubernetesStore).
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  Allocator,
  DualStackAllocator,
  InMemoryServiceCIDRs,
  MemoryStore,
  MetaAllocator,
  Range,
  ReferenceAllocator,
} from '../adapters/index.ts';
import { KubernetesServiceCIDRs, KubernetesStore } from '../adapters/kubernetes/index.ts';
import { SENDS_TO_ANOTHER_THREAD } from './helpers.ts';
import { kubeConfigFor } from './k8s/kubeconfig.ts';

/** A store nothing answers at (`start: false`): no call here reaches it. */
const remoteStore = () => new KubernetesStore(kubeConfigFor('http://127.0.0.1:9'), { start: false });

function ranges(): InMemoryServiceCIDRs {
  const cidrs = new InMemoryServiceCIDRs();
  cidrs.addServiceCIDR('kubernetes', ['10.0.0.0/24']);
  return cidrs;
}

const SENT: [string, () => { value: object; done: () => void }][] = [
  ['an InMemoryServiceCIDRs', () => ({ value: ranges(), done: () => {} })],
  [
    'a KubernetesStore',
    () => {
      const s = remoteStore();
      return { value: s, done: () => s.close() };
    },
  ],
  [
    'a KubernetesServiceCIDRs',
    () => {
      const c = new KubernetesServiceCIDRs(kubeConfigFor('http://127.0.0.1:9'), { start: false });
      return { value: c, done: () => c.close() };
    },
  ],
  [
    'a Range',
    () => {
      const r = new Range('10.0.0.0/24');
      r.allocate('10.0.0.1');
      return { value: r, done: () => r.destroy() };
    },
  ],
  [
    "a Range's dry run",
    () => {
      const r = new Range('10.0.0.0/24');
      return { value: r.dryRun(), done: () => r.destroy() };
    },
  ],
  [
    'an Allocator on a store of a cluster',
    () => {
      const s = remoteStore();
      const a = new Allocator('10.0.0.0/24', { store: s });
      return {
        value: a,
        done: () => {
          a.destroy();
          s.close();
        },
      };
    },
  ],
  [
    'a ReferenceAllocator on a store of a cluster',
    () => {
      const s = remoteStore();
      const a = new ReferenceAllocator('10.0.0.0/24', { store: s });
      return {
        value: a,
        done: () => {
          a.destroy();
          s.close();
        },
      };
    },
  ],
  [
    'a MetaAllocator on a store of a cluster',
    () => {
      const s = remoteStore();
      const a = new MetaAllocator('IPv4', ranges(), { store: s });
      return {
        value: a,
        done: () => {
          a.destroy();
          s.close();
        },
      };
    },
  ],
  [
    'a DualStackAllocator on a store of a cluster',
    () => {
      const s = remoteStore();
      const a = new DualStackAllocator(new Allocator('10.0.0.0/24', { store: s }), new Allocator('fd00::/120', { store: s }));
      return {
        value: a,
        done: () => {
          a.destroy();
          s.close();
        },
      };
    },
  ],
  [
    'an Allocator on a MemoryStore',
    () => {
      const s = new MemoryStore();
      const a = new Allocator('10.0.0.0/24', { store: s });
      return {
        value: a,
        done: () => {
          a.destroy();
          s.close();
        },
      };
    },
  ],
];

describe('a Range, an allocator or a store cannot be sent to another thread', () => {
  describe.each(SENDS_TO_ANOTHER_THREAD)('%s', (_how, send) => {
    it.each(SENT)('of %s: a DataCloneError saying it stays in its thread, not an internal function; it still works', (_what, make) => {
      const { value, done } = make();
      let thrown: unknown;
      try {
        send(value);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(Error);
      expect((thrown as Error).name).toBe('DataCloneError');
      expect((thrown as Error).message).toMatch(/^Symbol\(ipallocator: .*cannot be sent to another thread.*\) could not be cloned\.$/);
      // as before: nothing destroyed nor closed (a Kubernetes class shows its `life: { closed: false }`)
      expect(inspect(value)).not.toMatch(/destroyed|closed(?!: false)|unreadable/);
      done();
    });
  });
});
