// The implementations under test, each behind one small adapter so the harness can run the same
// cases on all of them. An implementation whose module is missing or does not work yet (a
// placeholder core) reports "not available: <why>" and the rest of the suite still runs.
//
//   reference       ReferenceAllocator on MemoryStore (async, strings; the port of upstream's scan)
//   legacy-bitmap   bench/legacy-bitmap.ts over a Uint32Array (sync, offsets)
//   allocator       Allocator on MemoryStore with the WASM index (async, strings)
//   store           the floors on the store side. allocateNext+release: format a free address's
//                   name, createSync + deleteSync it on the series' MemoryStore, two awaits — what
//                   any allocator on a MemoryStore must do besides choosing the address. Warm
//                   start: parse every name of the listing — what any load from a listing costs
//   range           the synchronous Range (sync, strings)
//   core            FreeIndex alone with numeric offsets: the floor of the allocator's strategy
//                   (u32 searches through bench/fast-path-index.ts, the core's dense fast path)
//   contiguous      lowest-free strategy on FreeIndex: nextFree from offset 0
//   go-seed         upstream's allocator re-typed in Go over a map (bench/go.ts, bench/go-seed/)
//   go-master       the same with upstream master's /64 fix
//
// Offsets are those of adapters/free-index.ts (0 = network + 1), as (hi, lo) u32 pairs.
import { Seeded } from './seeded.ts';
import { LegacyBitmapRange, legacyMax } from './legacy-bitmap.ts';
import type { RangeSpec } from './ranges.ts';
import type { Impl, Runner, WarmHandle } from './impl.ts';
import { goImpl } from './go.ts';

// ---------------------------------------------------------------------------------------------
// Loading modules that may not exist yet.

async function tryImport(rel: string): Promise<{ mod?: Record<string, unknown>; why?: string }> {
  const spec = new URL(rel, import.meta.url).href;
  try {
    return { mod: (await import(spec)) as Record<string, unknown> };
  } catch (e) {
    const msg = e instanceof Error ? e.message.split('\n')[0] : String(e);
    return {
      why: /Cannot find module|not find|ERR_MODULE_NOT_FOUND|No such file|Module not found/i.test(msg)
        ? `${rel.replace('../', '')} not there yet`
        : `import failed: ${msg}`,
    };
  }
}

type FreeIndexCtor = typeof import('../adapters/free-index.ts').FreeIndex;
type FastPathIndexCtor = typeof import('./fast-path-index.ts').FastPathIndex;
type FastPathIndexT = InstanceType<FastPathIndexCtor>;

interface CoreMods {
  FreeIndex: FreeIndexCtor;
  FastPathIndex: FastPathIndexCtor;
  heapInUse: () => number;
  why?: string;
}

let coreMods: Promise<CoreMods> | undefined;
/** adapters/free-index.ts (and the bench's FastPathIndex over it) plus a functional check of the index (dense and sparse). */
export function loadCore(): Promise<CoreMods> {
  coreMods ??= (async () => {
    const fi = await import('../adapters/free-index.ts');
    const fp = await import('./fast-path-index.ts');
    const w = await import('../adapters/wasm.ts');
    const heapInUse = (): number => w.core.heap_bytes_in_use();
    let why: string | undefined;
    for (const [kind, hi, lo] of [
      ['dense', 0, 1000],
      ['sparse', 0xffffffff, 0xffffffff],
    ] as const) {
      try {
        const x = new fi.FreeIndex(hi, lo, kind);
        const ok =
          x.set(0, 7) &&
          x.has(0, 7) &&
          !x.has(0, 8) &&
          x.count() === 1 &&
          x.nextFree(0, 7, 0, 0, 0, 999) &&
          x.resultLo === 8 &&
          x.clear(0, 7) &&
          x.count() === 0;
        x.destroy();
        if (!ok) why = `the ${kind} index gives wrong answers (placeholder core?)`;
      } catch (e) {
        why = `the ${kind} index does not work yet (${e instanceof Error ? e.message : String(e)})`;
      }
      if (why) break;
    }
    return { FreeIndex: fi.FreeIndex, FastPathIndex: fp.FastPathIndex, heapInUse, why };
  })();
  return coreMods;
}

/** Upper (dynamic) and lower (static) bands of a range as closed (hi, lo) intervals. */
function bands(r: RangeSpec): {
  uLoHi: number;
  uLoLo: number;
  uHiHi: number;
  uHiLo: number;
  lHiLo: number;
  lastHi: number;
  lastLo: number;
} {
  // last = size − 1
  const lastHi = r.sizeLo === 0 ? r.sizeHi - 1 : r.sizeHi;
  const lastLo = (r.sizeLo - 1) >>> 0;
  return { uLoHi: 0, uLoLo: r.rangeOffset, uHiHi: lastHi, uHiLo: lastLo, lHiLo: r.rangeOffset - 1, lastHi, lastLo };
}

// ---------------------------------------------------------------------------------------------
// core and contiguous: FreeIndex with numeric offsets.
//
// `core` is the allocator's strategy as the allocator runs it, without the addresses: a random
// start in the dynamic band (then the static band), and the first free offset from there found
// and marked in one core call, as the address space's take does (core-as/space.ts space_take:
// one boundary crossing per candidate); then the release clears it. Dense ranges take through
// the u32 fast path (FastPathIndex.takeFree32, dense_take_free32), wider ones through
// FreeIndex.takeFree (index_take_free, which marks a sparse index's start first, nearly always
// free). It once searched (nextFree), then set and cleared: three crossings per operation where
// the allocator makes two. `contiguous` is lowest-free: nextFree from 0, set, clear.

function indexImpl(name: 'core' | 'contiguous'): Impl {
  return {
    name,
    async available() {
      return (await loadCore()).why;
    },
    applicable() {
      return undefined;
    },
    async open(ctx) {
      const { FreeIndex, FastPathIndex, heapInUse } = await loadCore();
      const r = ctx.range;
      const b = bands(r);
      // the searches go through the dense u32 fast path (fast.nextFree32, takeFree32) where offsets fit u32
      let fast: FastPathIndexT = new FastPathIndex(r.sizeHi, r.sizeLo);
      const idx = fast.index;
      const rng = new Seeded(ctx.seed);
      const huge = r.sizeHi !== 0;
      const upperSpan = r.size - r.rangeOffset; // exact for the fillable ranges
      return {
        fillTo(from, to) {
          if (to > from) idx.setMany(ctx.pairs(from, to));
        },
        async runners() {
          const x = idx;
          const f = fast;
          const full = (): void => {
            throw new Error(`${name}: range unexpectedly full`);
          };
          const nextRelease: Runner =
            name === 'contiguous' && !huge
              ? {
                  kind: 'sync',
                  run(n) {
                    for (let i = 0; i < n; i++) {
                      const o = f.nextFree32(0, 0, b.lastLo);
                      if (o < 0) full();
                      x.set(0, o);
                      x.clear(0, o);
                    }
                  },
                }
              : name === 'contiguous'
                ? {
                    kind: 'sync',
                    run(n) {
                      for (let i = 0; i < n; i++) {
                        if (!x.nextFree(0, 0, 0, 0, b.lastHi, b.lastLo)) full();
                        x.set(x.resultHi, x.resultLo);
                        x.clear(x.resultHi, x.resultLo);
                      }
                    },
                  }
                : !huge
                  ? {
                      kind: 'sync',
                      run(n) {
                        // find and mark in one core call (dense_take_free32), as space_take does
                        const ro = r.rangeOffset;
                        for (let i = 0; i < n; i++) {
                          let o = f.takeFree32(ro + rng.intn(upperSpan), ro, b.uHiLo);
                          if (o < 0 && (ro === 0 || (o = f.takeFree32(rng.intn(ro), 0, ro - 1)) < 0)) full();
                          x.clear(0, o);
                        }
                      },
                    }
                  : {
                      kind: 'sync',
                      run(n) {
                        for (let i = 0; i < n; i++) {
                          // random start in the dynamic band, then the static band (as the allocator
                          // does); the first free offset from there found and marked in one core call
                          // (index_take_free: the start itself tried first), as space_take does
                          if (!x.takeFree(rng.u32(), rng.u32(), b.uLoHi, b.uLoLo, b.uHiHi, b.uHiLo)) {
                            if (r.rangeOffset === 0 || !x.takeFree(0, rng.intn(r.rangeOffset), 0, 0, 0, b.lHiLo)) full();
                          }
                          x.clear(x.resultHi, x.resultLo);
                        }
                      },
                    };
          const fullRunner: Runner = {
            kind: 'sync',
            run(n) {
              let found = 0;
              for (let i = 0; i < n; i++) {
                if (name === 'contiguous') {
                  if (x.nextFree(0, 0, 0, 0, b.lastHi, b.lastLo)) found++;
                } else if (
                  x.nextFree(0, r.rangeOffset + rng.intn(upperSpan), b.uLoHi, b.uLoLo, b.uHiHi, b.uHiLo) ||
                  (r.rangeOffset > 0 && x.nextFree(0, 0, 0, 0, 0, b.lHiLo))
                )
                  found++;
              }
              if (found) throw new Error(`${name}: the range is not full`);
            },
          };
          const fq = ctx.freeQueries().pairs;
          const hq = ctx.hasQueries().pairs;
          let fi = 0;
          let hi = 0;
          return {
            nextRelease,
            full: fullRunner,
            allocRelease: {
              kind: 'sync',
              run(n) {
                const m = fq.length >>> 1;
                if (m === 0) return;
                for (let i = 0; i < n; i++) {
                  const j = fi;
                  fi = fi + 1 === m ? 0 : fi + 1;
                  if (!x.set(fq[2 * j], fq[2 * j + 1])) throw new Error(`${name}: query address already taken`);
                  x.clear(fq[2 * j], fq[2 * j + 1]);
                }
              },
            },
            has: {
              kind: 'sync',
              run(n) {
                const m = hq.length >>> 1;
                let t = 0;
                for (let i = 0; i < n; i++) {
                  const j = hi;
                  hi = hi + 1 === m ? 0 : hi + 1;
                  if (x.has(hq[2 * j], hq[2 * j + 1])) t++;
                }
                if (t > n) throw new Error('unreachable');
              },
            },
            close() {},
          };
        },
        async warmStart(count) {
          const before = heapInUse();
          const fresh = new FreeIndex(r.sizeHi, r.sizeLo);
          fresh.setMany(ctx.pairs(0, count));
          const wasmBytes = Math.max(fresh.bytes(), heapInUse() - before);
          return { close: () => fresh.destroy(), wasmBytes };
        },
        close() {
          fast.destroy();
          fast = undefined as unknown as FastPathIndexT;
        },
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// legacy-bitmap: plain TS over a Uint32Array.

const legacyImpl: Impl = {
  name: 'legacy-bitmap',
  async available() {
    return undefined;
  },
  applicable(r) {
    const max = legacyMax(r.family, r.prefixBits);
    if (max < r.size) return `the legacy bitmap caps IPv6 at 65535 addresses (upstream ipallocator/bitmap.go): a ${r.prefix} does not fit`;
    return undefined;
  },
  async open(ctx) {
    const r = ctx.range;
    const rng = new Seeded(ctx.seed);
    const make = (): LegacyBitmapRange => new LegacyBitmapRange(r.family, r.prefixBits, rng);
    const bm = make();
    return {
      fillTo(from, to) {
        const p = ctx.pairs(from, to);
        for (let i = 1; i < p.length; i += 2) bm.allocate(p[i]);
      },
      async runners() {
        const fq = ctx.freeQueries().pairs;
        const hq = ctx.hasQueries().pairs;
        let fi = 0;
        let hi = 0;
        return {
          nextRelease: {
            kind: 'sync',
            run(n) {
              for (let i = 0; i < n; i++) {
                const o = bm.allocateNext();
                if (o < 0) throw new Error('legacy-bitmap: range unexpectedly full');
                bm.release(o);
              }
            },
          },
          full: {
            kind: 'sync',
            run(n) {
              for (let i = 0; i < n; i++) if (bm.allocateNext() >= 0) throw new Error('legacy-bitmap: range is not full');
            },
          },
          allocRelease: {
            kind: 'sync',
            run(n) {
              const m = fq.length >>> 1;
              if (m === 0) return;
              for (let i = 0; i < n; i++) {
                const o = fq[2 * fi + 1];
                fi = fi + 1 === m ? 0 : fi + 1;
                if (bm.allocate(o) !== 1) throw new Error('legacy-bitmap: query address not free');
                bm.release(o);
              }
            },
          },
          has: {
            kind: 'sync',
            run(n) {
              const m = hq.length >>> 1;
              let t = 0;
              for (let i = 0; i < n; i++) {
                if (bm.has(hq[2 * hi + 1])) t++;
                hi = hi + 1 === m ? 0 : hi + 1;
              }
              if (t > n) throw new Error('unreachable');
            },
          },
          close() {},
        };
      },
      async warmStart(count) {
        const fresh = make();
        const p = ctx.pairs(0, count);
        for (let i = 1; i < p.length; i += 2) fresh.allocate(p[i]);
        return { close() {}, jsBytes: fresh.bytes(), keep: fresh } as WarmHandle;
      },
      close() {},
    };
  },
};

// ---------------------------------------------------------------------------------------------
// reference and allocator: async allocators over a MemoryStore (each its own, the same records).

/** The part of adapters/types.ts IPAllocator the bench uses. */
interface AsyncAllocatorLike {
  allocate(ip: string): Promise<void>;
  allocateNext(): Promise<string>;
  release(ip: string): Promise<void>;
  has(ip: string): Promise<boolean>;
  used(): number;
  destroy(): void;
}
type AsyncAllocatorCtor = new (cidr: string, options: { store?: unknown; random?: unknown }) => AsyncAllocatorLike;

function asyncImpl(name: 'reference' | 'allocator', rel: string, exportName: string): Impl {
  let ctor: AsyncAllocatorCtor | undefined;
  let isFull: ((e: unknown) => boolean) | undefined;
  let seeded: ((seed: number) => unknown) | undefined;
  let heapInUse: (() => number) | undefined;
  return {
    name,
    async available() {
      const { mod, why } = await tryImport(rel);
      if (!mod) return why;
      const c = mod[exportName];
      if (typeof c !== 'function') return `${rel.replace('../', '')} has no export ${exportName} yet`;
      ctor = c as AsyncAllocatorCtor;
      const errors = await import('../adapters/errors.ts');
      isFull = (e) => e instanceof errors.ErrFull;
      const random = await tryImport('../adapters/random.ts');
      const sr = random.mod?.seededRandom;
      if (typeof sr === 'function') seeded = sr as (seed: number) => unknown;
      if (name === 'allocator') {
        const core = await loadCore();
        if (core.why) return core.why;
        heapInUse = core.heapInUse;
      }
      // functional check on a tiny range
      try {
        const { MemoryStore } = await import('../adapters/memory-store.ts');
        const a = new ctor('192.168.7.0/28', { store: new MemoryStore(), random: seeded?.(1) });
        const ip = await a.allocateNext();
        const ok = (await a.has(ip)) && a.used() === 1;
        await a.release(ip);
        a.destroy();
        if (!ok) return `${exportName} gives wrong answers on a /28`;
      } catch (e) {
        return `${exportName} does not work yet (${e instanceof Error ? e.message : String(e)})`;
      }
      return undefined;
    },
    applicable() {
      return undefined;
    },
    async open(ctx) {
      const r = ctx.range;
      let seedBump = 0;
      const make = (): AsyncAllocatorLike => new ctor!(r.cidr, { store: ctx.store, random: seeded?.(ctx.seed + seedBump++) });
      return {
        fillTo() {
          // the harness grows the store
        },
        async runners() {
          const a = make();
          const fq = ctx.freeQueries().text;
          const hq = ctx.hasQueries().text;
          let fi = 0;
          let hi = 0;
          const full = isFull!;
          return {
            nextRelease: {
              kind: 'async',
              async run(n) {
                for (let i = 0; i < n; i++) await a.release(await a.allocateNext());
              },
            },
            full: {
              kind: 'async',
              async run(n) {
                for (let i = 0; i < n; i++) {
                  try {
                    await a.allocateNext();
                  } catch (e) {
                    if (full(e)) continue;
                    throw e;
                  }
                  throw new Error(`${name}: range is not full`);
                }
              },
            },
            allocRelease: {
              kind: 'async',
              async run(n) {
                const m = fq.length;
                if (m === 0) return;
                for (let i = 0; i < n; i++) {
                  const ip = fq[fi];
                  fi = fi + 1 === m ? 0 : fi + 1;
                  await a.allocate(ip);
                  await a.release(ip);
                }
              },
            },
            has: {
              kind: 'async',
              async run(n) {
                const m = hq.length;
                for (let i = 0; i < n; i++) {
                  await a.has(hq[hi]);
                  hi = hi + 1 === m ? 0 : hi + 1;
                }
              },
            },
            close() {
              a.destroy();
            },
          };
        },
        async warmStart() {
          const before = heapInUse?.() ?? 0;
          const a = make();
          // a first call proves it is ready (it answers from the index it built)
          await a.has('0.0.0.0');
          return {
            close: () => a.destroy(),
            wasmBytes: heapInUse ? heapInUse() - before : undefined,
            note: name === 'allocator' ? 'WASM: one index (taken) + an O(1) used() counter' : 'no index: a Set of counted names',
          };
        },
        close() {},
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// store: the floor under both async allocators at this fill (allocateNext+release only).

/** How many distinct free addresses the store floor cycles through (see its runners). */
const FLOOR_NAMES = 1 << 20;

const storeFloorImpl: Impl = {
  name: 'store',
  async available() {
    return undefined;
  },
  applicable() {
    return undefined;
  },
  async open(ctx) {
    const { Prefix } = await import('../adapters/geometry.ts');
    const { parseAddrInto } = await import('../adapters/address.ts');
    const { writeLabelsFor } = await import('../adapters/records.ts');
    const prefix = Prefix.parse(ctx.range.cidr);
    // the labels an Allocator writes with: the store keeps them without freezing the record it
    // hands back, so the floor pays what the Allocator's own creates pay, no more
    const labels = writeLabelsFor(ctx.range.family);
    const store = ctx.store as import('../adapters/memory-store.ts').MemoryStore;
    let texts: string[] = [];
    return {
      fillTo() {
        // the harness grows the store
      },
      async runners() {
        // As many distinct free addresses as an allocator's random choices would spread over
        // (up to 2^20): each create lands on a slot of the store's table that the last thousand
        // did not warm, as an allocator's does. Cycling a few (freeQueries' 1,024) kept their
        // slots in the cache and understated the floor by a quarter at 10^6 records.
        const pairs = ctx.freePairs(FLOOR_NAMES);
        const m = pairs.length >>> 1;
        let j = 0;
        return {
          nextRelease: {
            kind: 'async',
            async run(n) {
              if (m === 0) return;
              for (let i = 0; i < n; i++) {
                // a fresh name string each time, as an allocator formats one
                const name = prefix.formatAt(pairs[2 * j]!, pairs[2 * j + 1]!);
                j = j + 1 === m ? 0 : j + 1;
                store.createSync({ name, labels, parentRef: null });
                await Promise.resolve(name);
                store.deleteSync(name);
                await undefined;
              }
            },
          },
          close() {},
        };
      },
      prepareWarm(count) {
        texts = ctx.texts(0, count);
      },
      async warmStart() {
        const w = new Uint32Array(4);
        let acc = 0;
        for (const t of texts) acc += parseAddrInto(t, w);
        if (acc === 0.5) console.log(acc); // keep the work observable
        return { close() {}, note: 'parse only: the floor of any load from a listing (holds nothing)' };
      },
      close() {},
    };
  },
};

// ---------------------------------------------------------------------------------------------
// range: the synchronous Range (adapters/range.ts), once it exists.

interface SyncRangeLike {
  allocate(ip: string): void;
  /** Batch warm start from a store listing (adapters/range.ts); the bench falls back to allocate(). */
  loadMany?(ips: readonly string[]): number;
  allocateNext(): string;
  release(ip: string): void;
  has(ip: string): boolean;
  destroy?(): void;
}
type SyncRangeCtor = new (cidr: string, options?: { random?: unknown }) => SyncRangeLike;

const rangeImpl: Impl = (() => {
  let ctor: SyncRangeCtor | undefined;
  let seeded: ((seed: number) => unknown) | undefined;
  let isFull: ((e: unknown) => boolean) | undefined;
  return {
    name: 'range' as const,
    async available() {
      const { mod, why } = await tryImport('../adapters/range.ts');
      if (!mod) return why;
      if (typeof mod.Range !== 'function') return 'adapters/range.ts has no export Range yet';
      ctor = mod.Range as SyncRangeCtor;
      const random = await tryImport('../adapters/random.ts');
      if (typeof random.mod?.seededRandom === 'function') seeded = random.mod.seededRandom as (seed: number) => unknown;
      const errors = await import('../adapters/errors.ts');
      isFull = (e) => e instanceof errors.ErrFull;
      try {
        const x = new ctor('192.168.7.0/28', { random: seeded?.(1) });
        const ip = x.allocateNext();
        const ok = x.has(ip);
        x.release(ip);
        x.destroy?.();
        if (!ok) return 'Range gives wrong answers on a /28';
      } catch (e) {
        return `Range does not work yet (${e instanceof Error ? e.message : String(e)})`;
      }
      return undefined;
    },
    applicable() {
      return undefined;
    },
    async open(ctx) {
      const r = ctx.range;
      const make = (): SyncRangeLike => new ctor!(r.cidr, { random: seeded?.(ctx.seed) });
      const x = make();
      const { heapInUse } = await loadCore();
      let texts: string[] | undefined;
      return {
        fillTo(from, to) {
          if (to <= from) return;
          const ips = ctx.texts(from, to);
          if (x.loadMany) x.loadMany(ips);
          else for (const ip of ips) x.allocate(ip);
        },
        async runners() {
          const fq = ctx.freeQueries().text;
          const hq = ctx.hasQueries().text;
          let fi = 0;
          let hi = 0;
          const full = isFull!;
          return {
            nextRelease: {
              kind: 'sync',
              run(n) {
                for (let i = 0; i < n; i++) x.release(x.allocateNext());
              },
            },
            full: {
              kind: 'sync',
              run(n) {
                for (let i = 0; i < n; i++) {
                  try {
                    x.allocateNext();
                  } catch (e) {
                    if (full(e)) continue;
                    throw e;
                  }
                  throw new Error('range: range is not full');
                }
              },
            },
            allocRelease: {
              kind: 'sync',
              run(n) {
                const m = fq.length;
                if (m === 0) return;
                for (let i = 0; i < n; i++) {
                  const ip = fq[fi];
                  fi = fi + 1 === m ? 0 : fi + 1;
                  x.allocate(ip);
                  x.release(ip);
                }
              },
            },
            has: {
              kind: 'sync',
              run(n) {
                const m = hq.length;
                let t = 0;
                for (let i = 0; i < n; i++) {
                  if (x.has(hq[hi])) t++;
                  hi = hi + 1 === m ? 0 : hi + 1;
                }
                if (t > n) throw new Error('unreachable');
              },
            },
            close() {},
          };
        },
        async warmStart(count) {
          // the store listing (names) exists before the warm start: not timed, not counted
          const ips = texts ?? ctx.texts(0, count);
          texts = undefined;
          const before = heapInUse();
          const fresh = make();
          if (fresh.loadMany) fresh.loadMany(ips);
          else for (const ip of ips) fresh.allocate(ip);
          return { close: () => fresh.destroy?.(), wasmBytes: heapInUse() - before };
        },
        prepareWarm(count) {
          texts = ctx.texts(0, count);
        },
        close() {
          x.destroy?.();
        },
      };
    },
  };
})();

export const IMPLS: readonly Impl[] = [
  asyncImpl('reference', '../adapters/reference-allocator.ts', 'ReferenceAllocator'),
  legacyImpl,
  asyncImpl('allocator', '../adapters/allocator.ts', 'Allocator'),
  storeFloorImpl,
  rangeImpl,
  indexImpl('core'),
  indexImpl('contiguous'),
  goImpl('go-seed'),
  goImpl('go-master'),
];
