// Differential fuzzing with the shared seeded driver (test/reliability/driver.ts).
//
// 1. Allocator ≡ ReferenceAllocator: the same seeded operation list on both (each on its own
//    MemoryStore, the same random seed) must give identical observable results — the address
//    of every allocateNext, the class and message of every error, used() and free() after every
//    operation, and at the end the same store records and forEach contents.
// 2. Range ≡ the allocators' set semantics: every operation is mirrored into a Range as the
//    static operation it amounts to (an address the allocator handed out must be free and in
//    range for the Range too; allocate/release/has answer the same way).
// 3. Range ≡ its own Set model: allocateNext/allocateMany/releaseMany/allocate/release/has on a
//    Range against a Set of addresses; forEach, validate() and a snapshot round trip along the way.
//
// Prefixes: one per size class — IPv4 /30 /28 /24 /20 /16, IPv6 /126 /120 /112 /100 /64.
// Each case runs IPALLOCATOR_FUZZ_OPS operations (default 10,000; 10 cases ⇒ 10^5 per suite and
// per comparison). A failure prints the seed and the shrunk operation list; add it to REGRESSIONS.
import { Allocator } from '../../adapters/allocator.ts';
import { ReferenceAllocator } from '../../adapters/reference-allocator.ts';
import { MemoryStore } from '../../adapters/memory-store.ts';
import { Range } from '../../adapters/range.ts';
import { seededRandom } from '../../adapters/random.ts';
import { ErrFull } from '../../adapters/errors.ts';
import type { IPAllocator } from '../../adapters/types.ts';
import { type Driver, Held, errorText, outcome } from './driver.ts';
import { addressFor, bigGeometry, inRange, addressValue as valueOfIp, type BigGeometry } from './addresses.ts';

/** One operation. `a` is resolved against the state at replay time (see addressFor). */
export type Op =
  | { k: 'next' }
  | { k: 'alloc'; a: number }
  | { k: 'rel'; a: number }
  | { k: 'has'; a: number }
  | { k: 'many'; n: number }
  | { k: 'relmany'; a: number; n: number };

export const PREFIXES: readonly string[] = [
  '192.168.10.0/30',
  '192.168.10.16/28',
  '192.168.10.0/24',
  '10.20.16.0/20',
  '10.30.0.0/16',
  '2001:db8:7::/126',
  'fd00:7::/120',
  '2001:db8:8::/112',
  '2001:db8:9::/100',
  '2001:db8:a:b::/64',
];

/**
 * The op list for one case. Phases of 1,000 ops (fill, churn, drain) so small ranges reach
 * "range is full" and large ranges see releases of what they hold. `rangeOps` adds the Range-only
 * batch operations.
 */
export function generate(d: Driver, n: number, count: bigint, rangeOps: boolean): Op[] {
  const ops: Op[] = [];
  // Ranges the scan-based reference must fill completely stay small; a large range is filled to a
  // few thousand addresses at most (the reference scans linearly, upstream's algorithm).
  for (let i = 0; i < n; i++) {
    const phase = Math.floor(i / 1000) % 3;
    const w = phase === 0 ? [50, 15, 15, 8] : phase === 1 ? [30, 15, 35, 8] : [12, 10, 60, 8];
    const kinds = rangeOps ? [...w, 3, 3] : w;
    switch (d.weighted(kinds)) {
      case 0:
        ops.push({ k: 'next' });
        break;
      case 1:
        ops.push({ k: 'alloc', a: d.u32() });
        break;
      case 2:
        ops.push({ k: 'rel', a: d.u32() });
        break;
      case 3:
        ops.push({ k: 'has', a: d.u32() });
        break;
      case 4: {
        // counts around what is free: 0, small, and more than the range holds
        const big = count > 1024n ? 1024 : Number(count);
        ops.push({ k: 'many', n: d.pick([0, 1, 2, 7, 33, big, big + 1]) });
        break;
      }
      default:
        ops.push({ k: 'relmany', a: d.u32(), n: d.between(0, 40) });
    }
  }
  return ops;
}

// ── 1 + 2: Allocator ≡ ReferenceAllocator, mirrored into a Range ───────────────────────────

/** Replays `ops`; null when every comparison held, else what differed (op index and values). */
export async function replayAllocators(cidr: string, seed: number, ops: readonly Op[]): Promise<string | null> {
  const g = bigGeometry(cidr);
  const ref = new ReferenceAllocator(cidr, { store: new MemoryStore(), random: seededRandom(seed) });
  const alloc = new Allocator(cidr, { store: new MemoryStore(), random: seededRandom(seed) });
  const range = new Range(cidr, { random: seededRandom(seed) });
  const held = new Held();
  try {
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      const at = `op ${i} ${JSON.stringify(op)}`;
      const both = async (f: (a: IPAllocator) => Promise<unknown>): Promise<string> => {
        const r = await outcome(f(ref));
        const a = await outcome(f(alloc));
        if (r !== a) throw new Error(`${at}: reference ${JSON.stringify(r)} but Allocator ${JSON.stringify(a)}`);
        return r;
      };
      if (op.k === 'next') {
        const r = await both((a) => a.allocateNext());
        if (r.startsWith('ok ')) {
          const ip = r.slice(3);
          if (!inRange(g, ip)) throw new Error(`${at}: allocateNext returned ${ip} outside [first, last] of ${cidr}`);
          const m = await outcome(() => range.allocate(ip));
          if (m !== 'ok') throw new Error(`${at}: allocators handed out ${ip} but Range.allocate says ${m}`);
          held.add(ip);
        } else if (r !== errorText(new ErrFull())) {
          throw new Error(`${at}: allocateNext failed with ${r}`);
        } else if (BigInt(range.used()) !== range.size) {
          throw new Error(`${at}: allocators say full but Range holds ${range.used()} of ${range.size}`);
        }
      } else if (op.k === 'alloc') {
        const ip = addressFor(g, op.a, held.list);
        const r = await both((a) => a.allocate(ip));
        const m = await outcome(() => range.allocate(ip));
        if (m !== r)
          throw new Error(`${at} allocate(${JSON.stringify(ip)}): allocators ${JSON.stringify(r)} but Range ${JSON.stringify(m)}`);
        if (r === 'ok') held.add(alloc.prefix.formatAt(...offsetPair(g, ip)));
      } else if (op.k === 'rel') {
        const ip = held.size > 0 && (op.a & 3) !== 0 ? held.at(op.a >>> 2) : addressFor(g, op.a, held.list);
        await both((a) => a.release(ip));
        const m = await outcome(() => range.release(ip));
        if (m !== 'ok' && !m.startsWith('InvalidAddressError')) throw new Error(`${at}: Range.release(${ip}) ${m}`);
        if (m === 'ok' && inRange(g, ip)) held.delete(alloc.prefix.formatAt(...offsetPair(g, ip)));
      } else if (op.k === 'has') {
        const ip = addressFor(g, op.a, held.list);
        const r = await both((a) => a.has(ip));
        const m = await outcome(() => range.has(ip));
        if (!m.startsWith('InvalidAddressError') && m !== r) throw new Error(`${at} has(${ip}): allocators ${r} but Range ${m}`);
      }
      if (ref.used() !== alloc.used() || ref.free() !== alloc.free()) {
        throw new Error(`${at}: used/free reference ${ref.used()}/${ref.free()} but Allocator ${alloc.used()}/${alloc.free()}`);
      }
      if (alloc.used() !== range.used()) throw new Error(`${at}: Allocator used ${alloc.used()} but Range ${range.used()}`);
    }
    const list = (a: { forEach(fn: (ip: string) => void): void }) => {
      const out: string[] = [];
      a.forEach((ip) => out.push(ip));
      return out.sort().join(',');
    };
    if (list(ref) !== list(alloc)) return `end: forEach differs between reference and Allocator`;
    if (list(alloc) !== list(range)) return `end: forEach differs between Allocator and Range`;
    if (list(alloc) !== [...held.list].sort().join(',')) return `end: forEach differs from the addresses handed out`;
    try {
      alloc.validate();
    } catch (e) {
      return `end: ${(e as Error).message}`;
    }
    range.validate();
    return null;
  } catch (e) {
    return (e as Error).message;
  } finally {
    ref.destroy();
    alloc.destroy();
    range.destroy();
  }
}

/** The (hi, lo) offset of an in-range ip. */
function offsetPair(g: BigGeometry, ip: string): [number, number] {
  const o = inRangeOffset(g, ip);
  return [Number(o >> 32n), Number(o & 0xffffffffn)];
}

function inRangeOffset(g: BigGeometry, ip: string): bigint {
  const { v } = valueOfIp(ip);
  return v - g.first;
}

// ── 3: Range ≡ Set model ────────────────────────────────────────────────────────────────────

export function replayRange(cidr: string, seed: number, ops: readonly Op[]): string | null {
  const g = bigGeometry(cidr);
  const range = new Range(cidr, { random: seededRandom(seed) });
  const count = g.last >= g.first ? g.last - g.first + 1n : 0n;
  const model = new Held(); // the Set model (canonical names), with pick-by-index
  const held = model.list;
  const add = (ip: string) => model.add(ip);
  const remove = (ip: string) => model.delete(ip);
  const canon = (ip: string) => range.prefix.formatAt(...offsetPair(g, ip));
  try {
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      const at = `op ${i} ${JSON.stringify(op)}`;
      if (op.k === 'next') {
        const r = (() => {
          try {
            return range.allocateNext();
          } catch (e) {
            return e as Error;
          }
        })();
        if (typeof r === 'string') {
          if (!inRange(g, r)) throw new Error(`${at}: allocateNext returned ${r} outside ${cidr}`);
          if (model.has(r)) throw new Error(`${at}: allocateNext returned ${r}, already allocated`);
          add(r);
        } else if (!(r instanceof ErrFull) || BigInt(model.size) !== count) {
          throw new Error(`${at}: allocateNext threw ${errorText(r)} with ${model.size} of ${count} taken`);
        }
      } else if (op.k === 'alloc') {
        const ip = addressFor(g, op.a, held);
        let ok: boolean;
        let want: string;
        try {
          ok = inRange(g, ip);
          want = !ok ? 'ErrNotInRange' : model.has(canon(ip)) ? 'ErrAllocated' : 'ok';
        } catch {
          ok = false;
          want = 'InvalidAddressError';
        }
        let got = 'ok';
        try {
          range.allocate(ip);
        } catch (e) {
          got = (e as Error).constructor.name;
        }
        if (got !== want) throw new Error(`${at} allocate(${JSON.stringify(ip)}): want ${want}, got ${got}`);
        if (got === 'ok') add(canon(ip));
      } else if (op.k === 'rel') {
        const ip = held.length > 0 && (op.a & 3) !== 0 ? model.at(op.a >>> 2) : addressFor(g, op.a, held);
        try {
          range.release(ip);
          if (inRange(g, ip)) remove(canon(ip));
        } catch (e) {
          if (!(e as Error).constructor.name.startsWith('InvalidAddress')) throw e;
        }
      } else if (op.k === 'has') {
        const ip = addressFor(g, op.a, held);
        let want: boolean | 'throws';
        try {
          want = inRange(g, ip) && model.has(canon(ip));
        } catch {
          want = 'throws';
        }
        let got: boolean | 'throws';
        try {
          got = range.has(ip);
        } catch {
          got = 'throws';
        }
        if (got !== want) throw new Error(`${at} has(${JSON.stringify(ip)}): want ${want}, got ${got}`);
      } else if (op.k === 'many') {
        const free = count - BigInt(model.size);
        const before = range.used();
        try {
          const out = range.allocateMany(op.n);
          if (BigInt(op.n) > free) throw new Error(`${at}: allocateMany(${op.n}) with ${free} free did not throw`);
          if (out.length !== op.n) throw new Error(`${at}: allocateMany(${op.n}) returned ${out.length}`);
          for (const ip of out) {
            if (!inRange(g, ip) || model.has(ip)) throw new Error(`${at}: allocateMany returned ${ip} (taken or outside)`);
            add(ip);
          }
        } catch (e) {
          if (!(e instanceof ErrFull) || BigInt(op.n) <= free) throw e;
          if (range.used() !== before) throw new Error(`${at}: a failed allocateMany changed used() ${before} → ${range.used()}`);
        }
      } else {
        const pickN = Math.min(op.n, held.length);
        const ips: string[] = [];
        for (let j = 0; j < pickN; j++) ips.push(held[(op.a + j * 7) % held.length]!);
        ips.push(addressFor(g, op.a ^ 0x55, held));
        let want = 0;
        const seen = new Set<string>();
        let malformed = false;
        for (const ip of ips) {
          try {
            if (inRange(g, ip)) {
              const c = canon(ip);
              if (model.has(c) && !seen.has(c)) want++;
              seen.add(c);
            }
          } catch {
            malformed = true;
          }
        }
        try {
          const got = range.releaseMany(ips);
          if (malformed) throw new Error(`${at}: releaseMany accepted malformed text`);
          if (got !== want) throw new Error(`${at}: releaseMany released ${got}, want ${want}`);
          for (const c of seen) remove(c);
        } catch (e) {
          if (!malformed || !(e as Error).constructor.name.startsWith('InvalidAddress')) throw e;
        }
      }
      if (range.used() !== model.size) throw new Error(`${at}: used ${range.used()}, model ${model.size}`);
      if (range.free() !== count - BigInt(model.size)) throw new Error(`${at}: free ${range.free()}, model ${count - BigInt(model.size)}`);
      if (i % 997 === 996 || i === ops.length - 1) {
        range.validate();
        const list: string[] = [];
        range.forEach((ip) => list.push(ip));
        if (list.length !== model.size || !list.every((ip) => model.has(ip)) || !ascending(list)) {
          throw new Error(`${at}: forEach is not the model in ascending order (${list.length} vs ${model.size})`);
        }
        const snap = range.snapshot();
        const copy = Range.fromSnapshot(snap);
        const list2: string[] = [];
        copy.forEach((ip) => list2.push(ip));
        copy.destroy();
        if (list2.join(',') !== list.join(',')) throw new Error(`${at}: snapshot → fromSnapshot is not the identity`);
      }
    }
    return null;
  } catch (e) {
    return (e as Error).message;
  } finally {
    range.destroy();
  }
}

/** True when the addresses are strictly ascending by value (each parsed once). */
function ascending(ips: readonly string[]): boolean {
  let prev = -1n;
  for (const ip of ips) {
    const v = valueOfIp(ip).v;
    if (v <= prev) return false;
    prev = v;
  }
  return true;
}

// ── regression rows (named; each a shrunk op list that once failed, or an edge worth pinning) ──

export interface Row {
  name: string;
  cidr: string;
  seed: number;
  ops: Op[];
  /** 'allocators' (1 + 2) or 'range' (3). */
  suite: 'allocators' | 'range';
}

export const REGRESSIONS: Row[] = [
  {
    name: 'edge: /30 filled by allocateNext, then ErrFull, release, refill',
    suite: 'allocators',
    cidr: '192.168.10.0/30',
    seed: 1,
    ops: [{ k: 'next' }, { k: 'next' }, { k: 'next' }, { k: 'rel', a: 1 }, { k: 'next' }, { k: 'next' }],
  },
  {
    name: 'edge: network, broadcast, last + 1 and network − 1 are not in range (/28)',
    suite: 'allocators',
    cidr: '192.168.10.16/28',
    seed: 2,
    ops: [6, 14, 38, 46, 30, 22].map((a) => ({ k: 'alloc', a }) as Op),
  },
  {
    name: 'edge: IPv6 all-ones is allocatable, last + 1 is the next prefix (/126)',
    suite: 'allocators',
    cidr: '2001:db8:7::/126',
    seed: 3,
    ops: [{ k: 'alloc', a: 30 }, { k: 'alloc', a: 38 }, { k: 'next' }, { k: 'next' }, { k: 'next' }],
  },
  {
    name: 'edge: IPv4-mapped spelling of an in-range address is that address (accepted, upstream)',
    suite: 'allocators',
    cidr: '192.168.10.0/24',
    seed: 4,
    ops: [
      { k: 'alloc', a: (3 << 3) | 7 },
      { k: 'alloc', a: 5 },
      { k: 'has', a: (3 << 3) | 7 },
    ],
  },
  {
    name: 'edge: allocateMany of exactly the free count, then 1 more → ErrFull, nothing taken',
    suite: 'range',
    cidr: '192.168.10.16/28',
    seed: 5,
    ops: [{ k: 'next' }, { k: 'many', n: 13 }, { k: 'many', n: 1 }, { k: 'relmany', a: 3, n: 5 }, { k: 'many', n: 6 }],
  },
  {
    name: 'edge: /64 draws over 2^64 − 257 offsets, static band after a far static allocate',
    suite: 'allocators',
    cidr: '2001:db8:a:b::/64',
    seed: 6,
    ops: [{ k: 'alloc', a: 0xfffffff8 }, { k: 'next' }, { k: 'next' }, { k: 'alloc', a: 3 }, { k: 'rel', a: 5 }],
  },
];
