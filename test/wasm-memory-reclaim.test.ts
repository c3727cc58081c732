// The safety net of adapters/free-index.ts: the WASM memory of a Range or Allocator dropped
// without destroy() is freed once the garbage collector collects it; destroy() frees it at once
// and leaves the collector nothing to free a second time.
//
// The collector is driven by hand: `gc` is exposed through V8's flags at run time (no
// --expose-gc needed). Where the runtime does not allow that, the test is skipped with the reason.
import { describe, expect, it } from 'vitest';
import { Allocator } from '../adapters/allocator.ts';
import { MemoryStore } from '../adapters/memory-store.ts';
import { Range } from '../adapters/range.ts';
import { core } from '../adapters/wasm.ts';
import { KubernetesStore } from '../adapters/kubernetes/store.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { kubeConfigFor } from './k8s/kubeconfig.ts';
import { exposeGc } from './helpers.ts';

const gc = exposeGc();
const inUse = (): number => core.heap_bytes_in_use();

/** Collects until the core's bytes in use fall to `target` (finalizers run in later tasks). */
async function collectUntil(target: number): Promise<number> {
  for (let i = 0; i < 50 && inUse() > target; i++) {
    gc!();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return inUse();
}

describe.skipIf(gc === undefined)('forgotten ranges and allocators (skipped: this runtime cannot expose gc)', () => {
  it('a Range dropped without destroy() has its WASM memory freed when it is collected', async () => {
    await collectUntil(0);
    const before = inUse();
    (() => {
      for (let i = 0; i < 20; i++) new Range('10.0.0.0/16').allocate('10.0.0.1');
    })();
    expect(inUse()).toBeGreaterThan(before);
    expect(await collectUntil(before)).toBe(before);
  });

  it('an Allocator dropped without destroy() has its WASM memory freed when it is collected', async () => {
    await collectUntil(0);
    const before = inUse();
    await (async () => {
      for (let i = 0; i < 20; i++) await Allocator.create('10.1.0.0/16', { store: new MemoryStore() }).allocateNext();
    })();
    expect(inUse()).toBeGreaterThan(before);
    expect(await collectUntil(before)).toBe(before);
  });

  it('Allocators dropped without destroy() on a KubernetesStore are collected once the store is closed, the store still referenced', async () => {
    const d = await ApiServerDouble.start();
    const store = new KubernetesStore(kubeConfigFor(d.url));
    try {
      await store.waitForSync();
      await collectUntil(0);
      const before = inUse();
      for (let i = 0; i < 5; i++) Allocator.create('10.4.0.0/16', { store }).used(); // subscribed, never destroyed
      expect(inUse()).toBeGreaterThan(before);
      store.close(); // its subscribers (the allocators) must not be kept by the closed store
      expect(await collectUntil(before)).toBe(before);
      expect(store.state).toBe('stopped');
    } finally {
      store.close();
      await d.close();
    }
  });

  it('destroy() frees at once, and a later collection frees nothing twice', async () => {
    await collectUntil(0);
    const before = inUse();
    const kept = new Range('10.2.0.0/24');
    kept.allocate('10.2.0.1');
    const withKept = inUse();
    (() => {
      const r = new Range('10.3.0.0/16');
      r.allocate('10.3.0.1');
      r.destroy();
    })();
    expect(inUse()).toBe(withKept);
    await collectUntil(before);
    // The destroyed range's handle was not freed again (a double free would corrupt the heap
    // and the kept range with it).
    expect(inUse()).toBe(withKept);
    expect(kept.has('10.2.0.1')).toBe(true);
    kept.validate();
    kept.destroy();
    expect(inUse()).toBe(before);
  });
});
