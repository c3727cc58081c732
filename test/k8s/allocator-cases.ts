// The part of the upstream allocator conformance suite (ipallocator_test.go: TestAllocateIPAllocator, TestAllocateNextIPAllocator and friends,
// plus the record shape) that runs unchanged against any KubernetesStore target: the API-server
// double (test/kubernetes-allocator.test.ts) and a real cluster (test/kubernetes-cluster.test.ts).
//
// Ported from test/conformance.test.ts rather than imported: that file defines its cases inline
// over MemoryStore's test hooks (inject, failCreates, collideCreates), none of which exist on a
// real API server. Every address here is derived from two configurable prefixes, so a cluster
// run stays inside documentation ranges:
//
//   v4 = a.b.c.0/24   A1 (the /24), A3 (a.b.c.0/32), A4 (a.b.c.0/25), A5 (a.b.c.240/30), A6, A15
//   v6 = x::/120      A1 (the /120: 255 addresses, offset 16), A14 (a compressed IPv6 prefix)
//
// Fault cases (A17 malformed names, A18 injected 500, A19 hidden object) need the double's
// switches and live in test/kubernetes-allocator.test.ts.
import { describe, expect, it } from 'vitest';
import { Allocator } from '../../adapters/allocator.ts';
import { ReferenceAllocator } from '../../adapters/reference-allocator.ts';
import type { AllocatorOptions } from '../../adapters/types.ts';
import { formatAddr, parseAddr, parsePrefix } from '../../adapters/address.ts';
import { Prefix } from '../../adapters/geometry.ts';
import { ErrAllocated, ErrFull, ErrNotInRange } from '../../adapters/errors.ts';
import { allocatorLabels, type IPAddressRecord, type ParentRef } from '../../adapters/store.ts';
import type { IPAllocator, IPFamily } from '../../adapters/types.ts';
import type { KubernetesStore } from '../../adapters/kubernetes/index.ts';
import { rejection } from '../helpers.ts';

/** The two allocator classes: same contract, same draws. */
export type Kind = 'Allocator' | 'ReferenceAllocator';
export const KINDS: Kind[] = ['Allocator', 'ReferenceAllocator'];

export function makeAllocator(kind: Kind, cidr: string, options: AllocatorOptions): IPAllocator {
  return kind === 'Allocator' ? Allocator.create(cidr, options) : new ReferenceAllocator(cidr, options);
}

/** What a target (double or cluster) provides to the shared cases. */
export interface Target {
  /** An IPv4 /24, e.g. 192.168.1.0/24. */
  readonly v4: string;
  /** An IPv6 /120, e.g. 2001:db8:1::/120. */
  readonly v6: string;
  /** The A14 prefix (upstream: fc::/112; a leading-zero-compressed IPv6 prefix). */
  readonly a14: string;
  /** Labelled names outside `v4` for A15 (upstream: 192.168.2.10 and 10.0.0.1). */
  readonly outsideV4: readonly string[];
  /** The owner passed to every allocate/allocateNext (undefined = upstream's nil parentRef). */
  readonly owner: ParentRef | undefined;
  /** A synced KubernetesStore (closed by the target after the test) and an allocator on it. */
  open(kind: Kind, cidr: string): Promise<{ a: IPAllocator; store: KubernetesStore }>;
  /** Creates an IPAddress as another client would, and waits until `store`'s cache holds it. */
  insert(store: KubernetesStore, name: string, labels: Record<string, string>): Promise<void>;
}

// --- addresses -------------------------------------------------------------------------------

function toBig(words: ArrayLike<number>): bigint {
  return (BigInt(words[0]!) << 96n) | (BigInt(words[1]!) << 64n) | (BigInt(words[2]!) << 32n) | BigInt(words[3]!);
}

/** The address `n` past the network address of `cidr` (n may be negative or past the prefix). */
export function at(cidr: string, n: number): string {
  const p = parsePrefix(cidr);
  const width = p.family === 4 ? 32n : 128n;
  const v = (toBig(p.words) + BigInt(n)) & ((1n << width) - 1n);
  const w = [Number((v >> 96n) & 0xffffffffn), Number((v >> 64n) & 0xffffffffn), Number((v >> 32n) & 0xffffffffn), Number(v & 0xffffffffn)];
  return formatAddr(p.family, w);
}

/** `cidr`'s network address with another prefix length, e.g. sub('10.0.0.0/24', 240, 30) = 10.0.0.240/30. */
export function sub(cidr: string, n: number, bits: number): string {
  return `${at(cidr, n)}/${bits}`;
}

export function inRange(cidr: string, ip: string): boolean {
  const { family, words } = parseAddr(ip);
  return Prefix.parse(cidr).inRange(family, words);
}

export function contains(cidr: string, ip: string): boolean {
  let parsed: { family: 4 | 6; words: Uint32Array };
  try {
    parsed = parseAddr(ip);
  } catch {
    return false;
  }
  return Prefix.parse(cidr).contains(parsed.family, parsed.words);
}

/** The parentRef the store sends and the server keeps for `owner` (group "" is omitted, Go omitempty). */
export function storedRef(owner: ParentRef | undefined): IPAddressRecord['parentRef'] {
  if (owner === undefined) return null;
  const r: ParentRef = { resource: owner.resource, name: owner.name };
  if (owner.group) r.group = owner.group;
  if (owner.namespace) r.namespace = owner.namespace;
  return r;
}

// --- the cases -------------------------------------------------------------------------------

/** Registers the shared cases for both allocator kinds (call inside a describe with the target's hooks). */
export function defineSharedCases(target: () => Target): void {
  describe.each(KINDS)('%s', (kind) => {
    const a1 = (t: Target) => [
      {
        name: 'IPv4',
        cidr: t.v4,
        family: 'IPv4',
        free: 254,
        released: at(t.v4, 5),
        alreadyAllocated: at(t.v4, 1),
        outOfRange: [at(t.v4, -1), at(t.v4, 0), at(t.v4, 255), at(t.v4, 258)],
      },
      {
        name: 'IPv6',
        cidr: t.v6,
        family: 'IPv6',
        free: 255,
        released: at(t.v6, 5),
        alreadyAllocated: at(t.v6, 1),
        outOfRange: [at(t.v6, -1), at(t.v6, 0), at(t.v6, 256), at(t.v4, 1)],
      },
    ];

    it.each([
      { row: 0, rowName: 'IPv4 /24' },
      { row: 1, rowName: 'IPv6 /120' },
    ])('A1 $rowName: allocates every address once, then ErrFull; release/allocate round-trips', async ({ row }) => {
      const t = target();
      const tc = a1(t)[row]!;
      const { a, store } = await t.open(kind, tc.cidr);
      expect(a.cidr).toBe(tc.cidr);
      expect(a.ipFamily).toBe(tc.family as IPFamily);
      expect(a.free()).toBe(BigInt(tc.free));
      expect(a.used()).toBe(0);
      const found = new Set<string>();
      while (a.free() > 0n) {
        const ip = await a.allocateNext(t.owner);
        if (found.has(ip)) throw new Error(`allocated ${ip} twice`);
        if (!inRange(tc.cidr, ip)) throw new Error(`allocated ${ip} outside ${tc.cidr}`);
        found.add(ip);
      }
      expect(found.size).toBe(tc.free);
      expect(await rejection(a.allocateNext(t.owner))).toBeInstanceOf(ErrFull);
      expect(found.has(tc.released)).toBe(true);

      await a.release(tc.released);
      expect(a.free()).toBe(1n);
      expect(a.used()).toBe(tc.free - 1);
      expect(await a.allocateNext(t.owner)).toBe(tc.released);
      await a.release(tc.released);

      for (const ip of tc.outOfRange) {
        const e = await rejection(a.allocate(ip, t.owner));
        expect(e, ip).toBeInstanceOf(ErrNotInRange);
        expect((e as ErrNotInRange).validRange).toBe(tc.cidr);
      }
      expect(await rejection(a.allocate(tc.alreadyAllocated, t.owner))).toBeInstanceOf(ErrAllocated);
      expect(a.free()).toBe(1n);
      expect(a.used()).toBe(tc.free - 1);
      await a.allocate(tc.released, t.owner);
      expect(a.free()).toBe(0n);
      expect(a.used()).toBe(tc.free);
      // The authority agrees with the index: every address of the range is an object.
      expect((await store.get(tc.released))?.name).toBe(tc.released);
      expect(store.cache.list().filter((r) => contains(tc.cidr, r.name)).length).toBe(tc.free);
    });

    it('A3 a /32 has nothing to give: free 0, allocateNext ErrFull, nothing created', async () => {
      const t = target();
      const { a, store } = await t.open(kind, sub(t.v4, 0, 32));
      expect(a.free()).toBe(0n);
      expect(await rejection(a.allocateNext(t.owner))).toBeInstanceOf(ErrFull);
      expect(store.cache.list().filter((r) => contains(t.v4, r.name))).toEqual([]);
    });

    it('A4 the upper band of a /25 fills first; the lower band stays for static allocation', async () => {
      const t = target();
      const { a } = await t.open(kind, sub(t.v4, 0, 25));
      expect(a.size).toBe(126n);
      for (let i = 0; i < 126 - 16; i++) await a.allocateNext(t.owner);
      for (let n = 17; n <= 126; n++) expect(await a.has(at(t.v4, n))).toBe(true);
      expect(a.free()).toBe(16n);
      for (let n = 1; n <= 16; n++) await a.allocate(at(t.v4, n), t.owner);
      expect(a.free()).toBe(0n);
      await a.release(at(t.v4, 10));
      expect(await a.allocateNext(t.owner)).toBe(at(t.v4, 10));
      expect(a.free()).toBe(0n);
    });

    it('A5 a /30 gives exactly its two addresses, then ErrFull', async () => {
      const t = target();
      const { a } = await t.open(kind, sub(t.v4, 240, 30));
      expect(a.free()).toBe(2n);
      const got = new Set([await a.allocateNext(t.owner), await a.allocateNext(t.owner)]);
      expect(got).toEqual(new Set([at(t.v4, 241), at(t.v4, 242)]));
      for (const ip of got) {
        expect(await a.has(ip)).toBe(true);
        expect(await rejection(a.allocate(ip, t.owner))).toBeInstanceOf(ErrAllocated);
      }
      expect(a.free()).toBe(0n);
      for (let i = 0; i < 20; i++) expect(await rejection(a.allocateNext(t.owner))).toBeInstanceOf(ErrFull);
      expect(a.size).toBe(2n);
    });

    it.each([[[]], [[1]], [[1, 254]], [[1, 128, 254]]])(
      'A6 forEach yields exactly the allocated set (offsets %j)',
      async (offsets: number[]) => {
        const t = target();
        const { a } = await t.open(kind, t.v4);
        const ips = offsets.map((n) => at(t.v4, n));
        for (const ip of ips) {
          await a.allocate(ip, t.owner);
          expect(await a.has(ip)).toBe(true);
        }
        const seen: string[] = [];
        a.forEach((ip) => seen.push(ip));
        // forEach is not filtered by CIDR: on a shared cluster keep only this test's prefix.
        const mine = seen.filter((ip) => contains(t.v4, ip));
        expect(mine.length).toBe(ips.length);
        expect(new Set(mine)).toEqual(new Set(ips));
      },
    );

    it('A14 a leading-zero-compressed IPv6 prefix allocates', async () => {
      const t = target();
      const { a, store } = await t.open(kind, t.a14);
      expect(a.cidr).toBe(t.a14);
      const ip = await a.allocateNext(t.owner);
      expect(inRange(t.a14, ip)).toBe(true);
      expect((await store.get(ip))?.labels).toEqual(allocatorLabels('IPv6'));
    });

    it('A15 used() counts only labelled objects inside the prefix', async () => {
      const t = target();
      const { a, store } = await t.open(kind, t.v4);
      for (const ip of [at(t.v4, 10), at(t.v4, 20), ...t.outsideV4]) await t.insert(store, ip, allocatorLabels('IPv4'));
      expect(a.used()).toBe(2);
      expect(a.free()).toBe(252n);
    });

    it('objects carry both upstream labels and the owner as spec.parentRef', async () => {
      const t = target();
      const { a, store } = await t.open(kind, t.v4);
      const ip = await a.allocateNext(t.owner);
      await a.allocate(at(t.v4, 1), t.owner);
      for (const name of [ip, at(t.v4, 1)]) {
        const r = await store.get(name);
        expect(r?.labels).toEqual(allocatorLabels('IPv4'));
        expect(r?.parentRef ?? null).toEqual(storedRef(t.owner));
      }
    });
  });
}
