// The boundary micro-benchmark (foundation issue): what one trip across JS ↔ WASM costs, next to
// the text work every string-API call does anyway.
//
//   i32 call              core.index_kind(ptr): one i32 in, one i32 out, a single load inside
//   u128_add round trip   4 words + (hi, lo) offset in, status out, 4 words read from scratch()
//   JS 4-word add         the same add with carries in plain JS (no boundary): the floor
//   parse+format IPv4/6   adapters/address.ts parseAddrInto + formatIPv4/formatIPv6, the text read
//   ipaddr.js …           the npm library, for scale (cold-path use only, see TOOLCHAIN.md)
import type { Budget, Measurement, Skipped } from './measure.ts';
import { measureAsync, measureSync } from './measure.ts';
import { Seeded } from './seeded.ts';

/** The boundary row the "range is full" target is read beside. */
export const REJECTION_FLOOR = 'await of a rejected call (rejection floor)';

export interface BoundaryResult {
  op: string;
  family: string;
  result: Measurement | Skipped | { unavailable: string };
  note?: string;
}

export async function runBoundary(
  budget: Budget,
  filter: (id: string) => boolean,
  progress: (s: string) => void,
): Promise<BoundaryResult[]> {
  const out: BoundaryResult[] = [];
  const w = await import('../adapters/wasm.ts');
  const { core, scratch } = w;
  const rng = new Seeded(0xb0da);
  const N = 1024;
  const words = new Uint32Array(4 * N);
  const offs = new Uint32Array(N);
  for (let i = 0; i < N; i++) {
    words[4 * i] = 0x20010db8;
    words[4 * i + 2] = rng.u32();
    words[4 * i + 3] = rng.u32();
    offs[i] = rng.u32();
  }
  let sink = 0;

  const cases: { op: string; family: string; make: () => ((n: number) => void) | string; note?: () => string | undefined }[] = [
    {
      op: 'i32 call (index_kind)',
      family: '-',
      make: () => {
        const p = core.scratch_ptr();
        return (n) => {
          let acc = 0;
          for (let i = 0; i < n; i++) acc += core.index_kind(p + ((i & 7) << 2));
          sink += acc;
        };
      },
    },
    {
      op: 'u128_add round trip',
      family: 'IPv6',
      make: () => {
        if (typeof core.u128_add !== 'function') return 'core.u128_add is not exported';
        return (n) => {
          let acc = 0;
          for (let i = 0; i < n; i++) {
            const j = i & (N - 1);
            const k = j << 2;
            core.u128_add(words[k], words[k + 1], words[k + 2], words[k + 3], 0, offs[j], 128);
            const s = scratch();
            acc += s[0] ^ s[1] ^ s[2] ^ s[3];
          }
          sink += acc;
        };
      },
      note: () => {
        // ::ffff:ffff + 1 must carry into word 2
        const st = core.u128_add(0x20010db8, 0, 0, 0xffffffff, 0, 1, 128);
        const s = scratch();
        return st === 1 && s[0] === 0x20010db8 && s[1] === 0 && s[2] === 1 && s[3] === 0
          ? undefined
          : 'placeholder core: wrong result, timing of a stub';
      },
    },
    {
      op: 'JS 4-word add (no WASM)',
      family: 'IPv6',
      make: () => (n) => {
        let acc = 0;
        for (let i = 0; i < n; i++) {
          const j = i & (N - 1);
          const k = j << 2;
          const t3 = words[k + 3] + offs[j];
          const r3 = t3 >>> 0;
          const t2 = words[k + 2] + (t3 > 0xffffffff ? 1 : 0);
          const r2 = t2 >>> 0;
          const t1 = words[k + 1] + (t2 > 0xffffffff ? 1 : 0);
          const r1 = t1 >>> 0;
          const r0 = (words[k] + (t1 > 0xffffffff ? 1 : 0)) >>> 0;
          acc += r0 ^ r1 ^ r2 ^ r3;
        }
        sink += acc;
      },
    },
  ];

  const addr = await import('../adapters/address.ts').catch(() => undefined);
  const v4Text: string[] = [];
  const v6Text: string[] = [];
  for (let i = 0; i < N; i++) {
    const v = (0x0a000000 + 1 + rng.intn(65534)) >>> 0;
    v4Text.push(`${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`);
    const a = rng.u32();
    const b = rng.u32();
    v6Text.push(
      `2001:db8::${(a >>> 16).toString(16)}:${(a & 0xffff).toString(16)}:${(b >>> 16).toString(16)}:${(b & 0xffff).toString(16)}`,
    );
  }
  // The IPv6 texts are read as an API response's are, through JSON.parse: flat strings. Built by
  // the template literal above they are ropes (V8 joins 13 characters and more as a string of
  // parts), each character then read through the parts: ≈ 20 ns more per parse+format, which no
  // record name pays. (The dotted quads, 12 characters at most here, are flat already.)
  v6Text.splice(0, N, ...(JSON.parse(JSON.stringify(v6Text)) as string[]));
  // Each row reads the formatted text's last character: a formatter that returns a rope (a
  // string made of parts) defers the copying to the first reader, who would pay it outside the
  // row; reading one character makes the row pay it.
  if (addr) {
    const tmp = new Uint32Array(4);
    cases.push(
      {
        op: 'parse+format IPv4',
        family: 'IPv4',
        make: () => (n) => {
          let acc = 0;
          for (let i = 0; i < n; i++) {
            addr.parseAddrInto(v4Text[i & (N - 1)], tmp);
            const text = addr.formatIPv4(tmp[3]);
            acc += text.charCodeAt(text.length - 1);
          }
          sink += acc;
        },
      },
      {
        op: 'parse+format IPv6',
        family: 'IPv6',
        make: () => (n) => {
          let acc = 0;
          for (let i = 0; i < n; i++) {
            addr.parseAddrInto(v6Text[i & (N - 1)], tmp);
            const text = addr.formatIPv6(tmp[0], tmp[1], tmp[2], tmp[3]);
            acc += text.charCodeAt(text.length - 1);
          }
          sink += acc;
        },
      },
    );
  } else {
    cases.push({ op: 'parse+format IPv4', family: 'IPv4', make: () => 'adapters/address.ts not there yet' });
    cases.push({ op: 'parse+format IPv6', family: 'IPv6', make: () => 'adapters/address.ts not there yet' });
  }
  const ipaddr = await import('ipaddr.js').then((m) => (m.default ?? m) as typeof import('ipaddr.js')).catch(() => undefined);
  if (ipaddr) {
    cases.push(
      {
        op: 'ipaddr.js parse+format IPv4',
        family: 'IPv4',
        make: () => (n) => {
          let acc = 0;
          for (let i = 0; i < n; i++) {
            const text = ipaddr.IPv4.parse(v4Text[i & (N - 1)]).toString();
            acc += text.charCodeAt(text.length - 1);
          }
          sink += acc;
        },
      },
      {
        op: 'ipaddr.js parse+format IPv6',
        family: 'IPv6',
        make: () => (n) => {
          let acc = 0;
          for (let i = 0; i < n; i++) {
            const text = ipaddr.IPv6.parse(v6Text[i & (N - 1)]).toRFC5952String();
            acc += text.charCodeAt(text.length - 1);
          }
          sink += acc;
        },
      },
    );
  }

  for (const c of cases) {
    if (!filter(`boundary:${c.op}`)) continue;
    progress(`boundary · ${c.op}`);
    const fn = c.make();
    if (typeof fn === 'string') {
      out.push({ op: c.op, family: c.family, result: { unavailable: fn } });
      continue;
    }
    const note = c.note?.();
    out.push({ op: c.op, family: c.family, result: await measureSync(fn, budget), note });
  }
  if (sink === 0.5) console.log(sink); // keep the work observable
  return out;
}

/**
 * The store floor: one MemoryStore create + delete (what every allocateNext+release and
 * allocate+release of the async allocators pays for the "API server" alone, events included),
 * through the promises (the reference's path) and through createSync/deleteSync (the
 * Allocator's path on a MemoryStore); the rejection floor (what awaiting any rejected call
 * costs); and the Allocator itself on an empty /16 both ways, to show what the synchronous store
 * calls are worth apart from the index.
 */
export async function runStoreFloor(budget: Budget): Promise<BoundaryResult[]> {
  const { MemoryStore } = await import('../adapters/memory-store.ts');
  const { Allocator } = await import('../adapters/allocator.ts');
  const { seededRandom } = await import('../adapters/random.ts');
  const { writeLabelsFor } = await import('../adapters/records.ts');
  // The labels both allocators write with (a store keeps them as they are). Any other label
  // object — even equal and frozen — is copied and validated as the API server would, which costs
  // several times the create itself: no allocator's path.
  const labels = writeLabelsFor('IPv4');
  const names: string[] = [];
  for (let i = 0; i < 1024; i++) names.push(`10.0.${i >> 8}.${i & 255}`);
  const out: BoundaryResult[] = [];

  let store = new MemoryStore();
  let k = 0;
  out.push({
    op: 'MemoryStore create+delete (store floor)',
    family: '-',
    result: await measureAsync(async (n) => {
      for (let i = 0; i < n; i++) {
        const name = names[k]!;
        k = (k + 1) & 1023;
        await store.create({ name, labels, parentRef: null });
        await store.delete(name);
      }
    }, budget),
  });
  store.close();

  store = new MemoryStore();
  const sync = store;
  out.push({
    op: 'MemoryStore createSync+deleteSync (store floor, sync)',
    family: '-',
    result: await measureAsync(async (n) => {
      for (let i = 0; i < n; i++) {
        const name = names[k]!;
        k = (k + 1) & 1023;
        sync.createSync({ name, labels, parentRef: null });
        sync.deleteSync(name);
      }
    }, budget),
  });
  store.close();

  // The rejection floor: what `await` of a rejected allocator call costs the caller by itself.
  // The error is made once and rejected the way the allocators reject (rejectSoon: one microtask
  // late, so that Node's unhandled-rejection bookkeeping is not paid); an allocator's "range is
  // full" adds its own work and the making of its ErrFull on top.
  const { ErrFull, rejectSoon } = await import('../adapters/errors.ts');
  const full = new ErrFull();
  out.push({
    op: REJECTION_FLOOR,
    family: '-',
    result: await measureAsync(async (n) => {
      for (let i = 0; i < n; i++) {
        try {
          await rejectSoon(full);
        } catch {
          // the answer every rejected call ends in
        }
      }
    }, budget),
  });

  for (const syncOps of [true, false]) {
    const s = new MemoryStore({ syncOps });
    const a = Allocator.create('10.0.0.0/16', { store: s, random: seededRandom(7) });
    out.push({
      op: `Allocator allocateNext+release, empty /16, ${syncOps ? 'sync store calls' : 'store promises (syncOps: false)'}`,
      family: 'IPv4',
      result: await measureAsync(async (n) => {
        for (let i = 0; i < n; i++) await a.release(await a.allocateNext());
      }, budget),
    });
    a.destroy();
    s.close();
  }

  {
    // As a Service's ClusterIP is allocated: with its owner, a fresh object per call (checked and
    // copied into the record: see checkParentRef).
    const s = new MemoryStore();
    const a = Allocator.create('10.0.0.0/16', { store: s, random: seededRandom(7) });
    out.push({
      op: 'Allocator allocateNext+release, empty /16, each with an owner (parentRef)',
      family: 'IPv4',
      result: await measureAsync(async (n) => {
        for (let i = 0; i < n; i++) {
          const owner = { group: '', resource: 'services', namespace: 'default', name: `svc-${i & 1023}` };
          await a.release(await a.allocateNext(owner));
        }
      }, budget),
    });
    a.destroy();
    s.close();
  }

  // What sharing one store costs: every allocator on it hears each record written or deleted.
  const { MetaAllocator } = await import('../adapters/meta-allocator.ts');
  const { DualStackAllocator } = await import('../adapters/dual-stack.ts');
  const { InMemoryServiceCIDRs } = await import('../adapters/service-cidrs.ts');
  const { Registry } = await import('prom-client');
  /** n allocateNext+release round trips of one allocator, whatever its addresses' type. */
  const roundTrips =
    <T>(next: () => Promise<T>, release: (taken: T) => Promise<void>) =>
    async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) await release(await next());
    };
  const shared: {
    op: string;
    family: string;
    make: (s: InstanceType<typeof MemoryStore>) => { run: (n: number) => Promise<void>; destroy: () => void };
  }[] = [
    {
      op: 'Allocator allocateNext+release, empty /16, another /16 allocator on the store',
      family: 'IPv4',
      make: (s) => {
        const a = Allocator.create('10.0.0.0/16', { store: s, random: seededRandom(7) });
        const other = Allocator.create('10.1.0.0/16', { store: s, random: seededRandom(8) });
        return {
          run: roundTrips(
            () => a.allocateNext(),
            (ip) => a.release(ip),
          ),
          destroy: () => {
            a.destroy();
            other.destroy();
          },
        };
      },
    },
    {
      // what enabling metrics costs per allocation (prom-client, a dev dependency here)
      op: 'Allocator allocateNext+release, empty /16, metrics on (a prom-client Registry)',
      family: 'IPv4',
      make: (s) => {
        const a = Allocator.create('10.0.0.0/16', { store: s, random: seededRandom(7), metrics: new Registry() });
        return {
          run: roundTrips(
            () => a.allocateNext(),
            (ip) => a.release(ip),
          ),
          destroy: () => a.destroy(),
        };
      },
    },
    {
      op: 'MetaAllocator allocateNext+release, one ServiceCIDR (empty /16)',
      family: 'IPv4',
      make: (s) => {
        const cidrs = new InMemoryServiceCIDRs();
        cidrs.addServiceCIDR('kubernetes', ['10.0.0.0/16']);
        const m = new MetaAllocator('IPv4', cidrs, { store: s, random: seededRandom(7) });
        return {
          run: roundTrips(
            () => m.allocateNext(),
            (ip) => m.release(ip),
          ),
          destroy: () => m.destroy(),
        };
      },
    },
    {
      op: 'DualStackAllocator allocateNext+release, empty /16 and /64 on one store',
      family: '-',
      make: (s) => {
        const d = new DualStackAllocator(
          Allocator.create('10.0.0.0/16', { store: s, random: seededRandom(7) }),
          Allocator.create('fd00::/64', { store: s, random: seededRandom(8) }),
        );
        return {
          run: roundTrips(
            () => d.allocateNext(),
            (ips) => d.release(ips),
          ),
          destroy: () => d.destroy(),
        };
      },
    },
  ];
  for (const c of shared) {
    const s = new MemoryStore();
    const subject = c.make(s);
    out.push({ op: c.op, family: c.family, result: await measureAsync(subject.run, budget) });
    subject.destroy();
    s.close();
  }
  return out;
}
