// The core's 128-bit address math, prefix geometry and wraparound iterator (core-as/u128.ts,
// prefix.ts, iter.ts) and their TypeScript side (adapters/geometry.ts).
//
// Three layers of oracle:
//   1. upstream's own test tables (ipallocator_test.go, allocator_test.go) and the worked table of
//      docs/semantics.md, as named rows;
//   2. a deliberately slow BigInt reference (`ref*` below) that fast-check compares with the core
//      on random addresses, offsets and prefixes, biased towards the edges (0, 2^63, 2^64 − 1,
//      the all-ones address);
//   3. the core itself, as the oracle for the JS hot-path conversions in Prefix.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatAddr, parseAddr } from '../adapters/address.ts';
import {
  addOffsetAddress,
  broadcastAddress,
  calculateRangeOffset,
  hostsPerNetwork,
  INVALID_FIRST_ADDRESS,
  ipIterator,
  Prefix,
} from '../adapters/geometry.ts';
import { core, NONE, OK, OUT_OF_RANGE, scratch, TOO_FAR } from '../adapters/wasm.ts';

const MAX_INT64 = (1n << 63n) - 1n;
const MAX_UINT64 = (1n << 64n) - 1n;
const ALL_ONES = (1n << 128n) - 1n;

// ── helpers: bigint ⇄ words ──────────────────────────────────────────────────────────────────

type Width = 32 | 128;

function words(v: bigint): [number, number, number, number] {
  return [
    Number((v >> 96n) & 0xffff_ffffn),
    Number((v >> 64n) & 0xffff_ffffn),
    Number((v >> 32n) & 0xffff_ffffn),
    Number(v & 0xffff_ffffn),
  ];
}
function big(w: ArrayLike<number>): bigint {
  return (BigInt(w[0]!) << 96n) | (BigInt(w[1]!) << 64n) | (BigInt(w[2]!) << 32n) | BigInt(w[3]!);
}
function hiLo(v: bigint): [number, number] {
  return [Number(v >> 32n), Number(v & 0xffff_ffffn)];
}
function scratchAddr(): bigint {
  return big(scratch());
}
function scratchU64(at = 0): bigint {
  const s = scratch();
  return (BigInt(s[at]!) << 32n) | BigInt(s[at + 1]!);
}
function text(v: bigint, width: Width): string {
  return formatAddr(width === 32 ? 4 : 6, words(v));
}
function _value(addr: string): bigint {
  return big(parseAddr(addr).words);
}

// ── the slow reference (BigInt, straight from the upstream Go) ───────────────────────────────

function refAdd(a: bigint, off: bigint, width: Width): bigint | undefined {
  const sum = a + off;
  return sum < 1n << BigInt(width) ? sum : undefined;
}
function refSub(a: bigint, b: bigint): bigint | 'none' | 'too far' {
  if (a < b) return 'none';
  return a - b > MAX_UINT64 ? 'too far' : a - b;
}
function refHosts(bits: number, width: Width): bigint {
  const h = width - bits;
  if (h >= 64) return MAX_UINT64;
  let max = (1n << BigInt(h)) - 1n;
  if (width === 32) max = max === 0n ? 0n : max - 1n;
  return max;
}
function refRangeOffset(bits: number, width: Width): number {
  const h = width - bits;
  if (h >= width - 1) return 0; // k8s.io/utils RangeSize is 0 there
  const cidrSize = h >= 63 ? MAX_INT64 : 1n << BigInt(h);
  if (cidrSize <= 16n) return 0;
  const offset = cidrSize / 16n;
  return Number(offset < 16n ? 16n : offset > 256n ? 256n : offset);
}
interface RefGeometry {
  network: bigint;
  broadcast: bigint;
  first?: bigint;
  last?: bigint;
  offsetAddress?: bigint;
  size: bigint;
  rangeOffset: number;
  count: bigint;
}
function refGeometry(a: bigint, bits: number, width: Width): RefGeometry {
  const host = (1n << BigInt(width - bits)) - 1n;
  const network = a & ~host;
  const broadcast = network | host;
  const first = refAdd(network, 1n, width);
  const last = width === 32 ? (broadcast === 0n ? undefined : broadcast - 1n) : broadcast;
  const rangeOffset = refRangeOffset(bits, width);
  const offsetAddress = first === undefined ? undefined : refAdd(first, BigInt(rangeOffset), width);
  let count = 0n;
  if (first !== undefined && last !== undefined && first <= last) count = last - first + 1n;
  if (count > MAX_UINT64) count = MAX_UINT64;
  return { network, broadcast, first, last, offsetAddress, size: refHosts(bits, width), rangeOffset, count };
}
/** ipIterator for a non-empty range, as a list: start, …, last, first, …, start − 1. */
function refIter(first: bigint, last: bigint, offset: bigint, width: Width): bigint[] {
  let start = refAdd(first, offset, width);
  if (start === undefined) return [];
  if (start > last) start = first;
  const out: bigint[] = [];
  for (let a = start; a <= last; a++) out.push(a);
  for (let a = first; a < start; a++) out.push(a);
  return out;
}

// ── core wrappers returning bigints ──────────────────────────────────────────────────────────

function coreAdd(a: bigint, off: bigint, width: Width): bigint | number {
  const st = core.u128_add(...words(a), ...hiLo(off), width);
  return st === OK ? scratchAddr() : st;
}
function coreSub(a: bigint, b: bigint): bigint | 'none' | 'too far' {
  const st = core.u128_sub(...words(a), ...words(b));
  if (st === NONE) return 'none';
  if (st === TOO_FAR) return 'too far';
  expect(st).toBe(OK);
  return scratchU64();
}
function coreIter(first: bigint, last: bigint, offset: bigint, width: Width, limit = 1 << 16): bigint[] {
  if (core.iter_start(...words(first), ...words(last), ...hiLo(offset), width) !== OK) return [];
  const start = scratchAddr();
  const out: bigint[] = [start];
  let cur = start;
  while (out.length <= limit && core.iter_step(...words(cur), ...words(first), ...words(last), ...words(start)) === OK) {
    cur = scratchAddr();
    out.push(cur);
  }
  return out;
}

// ── generators ───────────────────────────────────────────────────────────────────────────────

const EDGE_U64 = [0n, 1n, 2n, 255n, 256n, 0xffff_ffffn, 1n << 32n, MAX_INT64, 1n << 63n, (1n << 63n) + 1n, MAX_UINT64 - 1n, MAX_UINT64];
const offsetArb = fc.oneof(fc.constantFrom(...EDGE_U64), fc.bigInt({ min: 0n, max: MAX_UINT64 }), fc.bigInt({ min: 0n, max: 4096n }));
function addrArb(width: Width): fc.Arbitrary<bigint> {
  const max = (1n << BigInt(width)) - 1n;
  const edges = [0n, 1n, max, max - 1n, 1n << BigInt(width - 1), (1n << BigInt(width - 1)) - 1n];
  if (width === 128) edges.push(MAX_UINT64, 1n << 64n, (1n << 64n) - 2n, 0xfd54_ceea_51ad_2f00n << 64n);
  return fc.oneof(
    fc.constantFrom(...edges),
    fc.bigInt({ min: 0n, max }),
    // near the top of the family, where sums overflow
    fc.bigInt({ min: 0n, max: 1n << 20n }).map((d) => max - d),
  );
}
const widthArb = fc.constantFrom<Width>(32, 128);
const prefixArb = widthArb.chain((width) =>
  fc.record({
    width: fc.constant(width),
    a: addrArb(width),
    bits: fc.oneof(fc.integer({ min: 0, max: width }), fc.constantFrom(width, width - 1, 64, 63, 65, 0, 1)).filter((b) => b <= width),
  }),
);

// ═════════════════════════════════════════════════════════════════════════════════════════════
// 1. Upstream tables
// ═════════════════════════════════════════════════════════════════════════════════════════════

describe('addOffsetAddress — A2 TestAddOffsetAddress (#134193: offsets ≥ 2^63 stay inside the /64)', () => {
  const base = 'fd54:ceea:51ad:2f00::0';
  it.each([
    { name: 'zero', offset: 0n, want: 'fd54:ceea:51ad:2f00::' },
    { name: 'one', offset: 1n, want: 'fd54:ceea:51ad:2f00::1' },
    { name: 'MaxInt64', offset: MAX_INT64, want: 'fd54:ceea:51ad:2f00:7fff:ffff:ffff:ffff' },
    { name: 'MaxInt64+1', offset: MAX_INT64 + 1n, want: 'fd54:ceea:51ad:2f00:8000::' },
    { name: 'MaxUint64', offset: MAX_UINT64, want: 'fd54:ceea:51ad:2f00:ffff:ffff:ffff:ffff' },
    { name: 'MaxUint64-1', offset: MAX_UINT64 - 1n, want: 'fd54:ceea:51ad:2f00:ffff:ffff:ffff:fffe' },
    { name: '(MaxUint64>>13)-1', offset: (MAX_UINT64 >> 13n) - 1n, want: 'fd54:ceea:51ad:2f00:7:ffff:ffff:fffe' },
    { name: 'MaxUint64>>59', offset: MAX_UINT64 >> 59n, want: 'fd54:ceea:51ad:2f00::1f' },
  ])('$name', ({ offset, want }) => {
    expect(addOffsetAddress(base, offset)).toBe(want);
  });
});

describe('addOffsetAddress — A9 Test_addOffsetAddress', () => {
  const rows = [
    { name: 'IPv4 offset 0', address: '192.168.0.0', offset: 0n, want: '192.168.0.0' },
    { name: 'IPv4 not network offset 0', address: '192.168.0.11', offset: 0n, want: '192.168.0.11' },
    { name: 'IPv4 offset 1', address: '192.168.0.0', offset: 1n, want: '192.168.0.1' },
    { name: 'IPv4 not network offset 1', address: '192.168.0.11', offset: 1n, want: '192.168.0.12' },
    { name: 'IPv6 offset 1', address: 'fd00:1:2:3::', offset: 1n, want: 'fd00:1:2:3::1' },
    { name: 'IPv6 not network offset 1', address: 'fd00:1:2:3::a', offset: 1n, want: 'fd00:1:2:3::b' },
    { name: 'IPv4 offset last', address: '192.168.0.0', offset: 255n, want: '192.168.0.255' },
    { name: 'IPv6 offset last', address: 'fd00:1:2:3::', offset: MAX_INT64, want: 'fd00:1:2:3:7fff:ffff:ffff:ffff' },
    { name: 'IPv4 offset middle', address: '192.168.0.0', offset: 128n, want: '192.168.0.128' },
    { name: 'IPv4 with leading zeros', address: '0.0.1.8', offset: 138n, want: '0.0.1.146' },
    { name: 'IPv6 with leading zeros', address: '00fc::1', offset: 255n, want: 'fc::100' },
    { name: 'IPv6 offset 255', address: '2001:db8:1::101', offset: 255n, want: '2001:db8:1::200' },
    { name: 'IPv6 offset 1025', address: 'fd00:1:2:3::', offset: 1025n, want: 'fd00:1:2:3::401' },
  ];
  it.each(rows)('$name', ({ address, offset, want }) => {
    expect(addOffsetAddress(address, offset)).toBe(want);
    // Upstream cross-check: the same address by repeated Next() when the offset is small.
    if (offset < 2048n) {
      const { family, words: w } = parseAddr(address);
      const width = family === 4 ? 32 : 128;
      let a = big(w);
      for (let i = 0n; i < offset; i++) {
        expect(core.u128_next(...words(a), width)).toBe(OK);
        a = scratchAddr();
      }
      expect(formatAddr(family, words(a))).toBe(want);
    }
  });

  it.each([
    {
      name: 'IPv4 all-ones + 1 (Go prints the 5-byte sum)',
      address: '255.255.255.255',
      offset: 1n,
      message: 'invalid address [1 0 0 0 0]',
    },
    { name: 'IPv4 + MaxUint64', address: '0.0.0.1', offset: MAX_UINT64, message: 'invalid address [1 0 0 0 0 0 0 0 0]' },
    {
      name: 'IPv6 all-ones + 1',
      address: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      offset: 1n,
      message: `invalid address [1${' 0'.repeat(16)}]`,
    },
  ])('overflow: $name', ({ address, offset, message }) => {
    expect(() => addOffsetAddress(address, offset)).toThrow(message);
  });

  it.each([
    { name: 'negative', offset: -1n },
    { name: '2^64', offset: 1n << 64n },
    { name: 'a number', offset: 1 as unknown as bigint },
  ])('rejects an offset that is not a u64: $name', ({ offset }) => {
    expect(() => addOffsetAddress('10.0.0.0', offset)).toThrow(/offset must be a bigint/);
  });

  it('quotes an offset of the wrong type as what it is', () => {
    expect(() => addOffsetAddress('10.0.0.0', '5' as unknown as bigint)).toThrow('offset must be a bigint in [0, 2^64 − 1], got "5"');
    expect(() => addOffsetAddress('10.0.0.0', 5 as unknown as bigint)).toThrow('offset must be a bigint in [0, 2^64 − 1], got 5 (number)');
    expect(() => addOffsetAddress('10.0.0.0', -1n)).toThrow('offset must be a bigint in [0, 2^64 − 1], got -1n');
  });
});

describe('broadcastAddress — A10 Test_broadcastAddress', () => {
  it.each([
    { name: 'ipv4', cidr: '192.168.0.0/24', want: '192.168.0.255' },
    { name: 'ipv4 no byte boundaries', cidr: '10.0.0.0/12', want: '10.15.255.255' },
    { name: 'ipv6', cidr: 'fd00:1:2:3::/64', want: 'fd00:1:2:3:ffff:ffff:ffff:ffff' },
    { name: 'ipv6 00fc::/112', cidr: '00fc::/112', want: 'fc::ffff' },
    { name: 'ipv6 fc00::/112', cidr: 'fc00::/112', want: 'fc00::ffff' },
  ])('$name', ({ cidr, want }) => {
    expect(broadcastAddress(cidr)).toBe(want);
  });
});

describe('hostsPerNetwork — A11 Test_hostsPerNetwork', () => {
  it.each([
    { name: 'an IPv4 /24', cidr: '192.168.1.0/24', want: 254n },
    { name: 'single IPv4 host', cidr: '192.168.1.0/32', want: 0n },
    { name: 'small IPv4 network', cidr: '192.168.1.0/31', want: 0n },
    { name: 'very large IPv4 network', cidr: '0.0.0.0/1', want: 2147483646n },
    { name: 'full IPv4 network', cidr: '0.0.0.0/0', want: 4294967294n },
    { name: 'an IPv6 /112', cidr: '2001:db2::/112', want: 65535n },
    { name: 'single IPv6 host', cidr: '2001:db8::/128', want: 0n },
    { name: 'small IPv6 network', cidr: '2001:db8::/127', want: 1n },
    { name: 'largest IPv6 for Int64', cidr: '2001:db8::/65', want: MAX_INT64 },
    { name: 'largest IPv6 for Uint64', cidr: '2001:db8::/64', want: MAX_UINT64 },
    { name: 'very large IPv6 network', cidr: '2001:db8::/1', want: MAX_UINT64 },
  ])('$name', ({ cidr, want }) => {
    expect(hostsPerNetwork(cidr)).toBe(want);
    expect(Prefix.parse(cidr).size).toBe(want);
  });
});

describe('ipIterator — A12 Test_ipIterator (exact sequences, then none ×5)', () => {
  it.each([
    { name: 'start with first address', first: '192.168.0.1', last: '192.168.0.2', offset: 0n, want: ['192.168.0.1', '192.168.0.2'] },
    { name: 'start with last address', first: '192.168.0.1', last: '192.168.0.2', offset: 1n, want: ['192.168.0.2', '192.168.0.1'] },
    {
      name: 'start with offset out of range (clamps to first)',
      first: '192.168.0.1',
      last: '192.168.0.2',
      offset: 10n,
      want: ['192.168.0.1', '192.168.0.2'],
    },
    {
      name: 'start with first address (7)',
      first: '192.168.0.1',
      last: '192.168.0.7',
      offset: 0n,
      want: ['192.168.0.1', '192.168.0.2', '192.168.0.3', '192.168.0.4', '192.168.0.5', '192.168.0.6', '192.168.0.7'],
    },
    {
      name: 'start with offset 2',
      first: '192.168.0.1',
      last: '192.168.0.7',
      offset: 2n,
      want: ['192.168.0.3', '192.168.0.4', '192.168.0.5', '192.168.0.6', '192.168.0.7', '192.168.0.1', '192.168.0.2'],
    },
    {
      name: 'start with offset 6 (last)',
      first: '192.168.0.1',
      last: '192.168.0.7',
      offset: 6n,
      want: ['192.168.0.7', '192.168.0.1', '192.168.0.2', '192.168.0.3', '192.168.0.4', '192.168.0.5', '192.168.0.6'],
    },
  ])('$name', ({ first, last, offset, want }) => {
    const next = ipIterator(first, last, offset);
    const got: string[] = [];
    for (let ip = next(); ip !== undefined; ip = next()) got.push(ip);
    expect(got).toEqual(want);
    for (let i = 0; i < 5; i++) expect(next()).toBeUndefined();
  });
});

describe('ipIterator — A13 Test_ipIterator_Number (counts, then none ×5)', () => {
  it.each([
    { name: 'IPv4 2 @0', first: '192.168.0.1', last: '192.168.0.2', offset: 0n, want: 2 },
    { name: 'IPv4 2 @1', first: '192.168.0.1', last: '192.168.0.2', offset: 1n, want: 2 },
    { name: 'IPv4 2 @10', first: '192.168.0.1', last: '192.168.0.2', offset: 10n, want: 2 },
    { name: 'IPv4 7 @0', first: '192.168.0.1', last: '192.168.0.7', offset: 0n, want: 7 },
    { name: 'IPv4 7 @2', first: '192.168.0.1', last: '192.168.0.7', offset: 2n, want: 7 },
    { name: 'IPv4 7 @6', first: '192.168.0.1', last: '192.168.0.7', offset: 6n, want: 7 },
    { name: 'IPv6 3839 @0', first: '2001:db8:1::101', last: '2001:db8:1::fff', offset: 0n, want: 3839 },
    { name: 'IPv6 3839 @255', first: '2001:db8:1::101', last: '2001:db8:1::fff', offset: 255n, want: 3839 },
    { name: 'IPv6 3839 @3838', first: '2001:db8:1::101', last: '2001:db8:1::fff', offset: 3838n, want: 3839 },
  ])('$name', ({ first, last, offset, want }) => {
    const next = ipIterator(first, last, offset);
    const seen = new Set<string>();
    for (let ip = next(); ip !== undefined; ip = next()) seen.add(ip);
    expect(seen.size).toBe(want);
    for (let i = 0; i < 5; i++) expect(next()).toBeUndefined();
  });
});

describe('ipIterator — edges beyond the upstream tables', () => {
  it.each([
    {
      name: 'start beyond the family yields nothing',
      first: '255.255.255.250',
      last: '255.255.255.255',
      offset: 6n,
      want: [] as string[] | null,
    },
    {
      name: 'start beyond the family (IPv6, offset MaxUint64)',
      first: 'ffff:ffff:ffff:ffff::1',
      last: 'ffff:ffff:ffff:ffff::3',
      offset: MAX_UINT64,
      want: [],
    },
    {
      name: 'a range ending at the IPv4 all-ones address wraps',
      first: '255.255.255.253',
      last: '255.255.255.255',
      offset: 1n,
      want: ['255.255.255.254', '255.255.255.255', '255.255.255.253'],
    },
    {
      name: 'a range ending at ffff:…:ffff wraps (upstream stops there)',
      first: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe',
      last: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      offset: 1n,
      want: ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe'],
    },
    { name: 'a single address', first: '10.0.0.1', last: '10.0.0.1', offset: 0n, want: ['10.0.0.1'] },
    { name: 'a single address, offset clamps', first: '10.0.0.1', last: '10.0.0.1', offset: 5n, want: ['10.0.0.1'] },
    {
      name: 'an IPv4 offset past 2^32 yields nothing instead of clamping',
      first: '10.0.0.1',
      last: '10.0.0.1',
      offset: MAX_INT64,
      want: [],
    },
    {
      name: 'a /64 upper band: first + MaxUint64 lands one past last and clamps to first (§5.1)',
      first: '2001:db8::1',
      last: '2001:db8::ffff:ffff:ffff:ffff',
      offset: MAX_UINT64,
      want: null,
    },
    { name: 'first > last is empty (upstream yields first once)', first: '10.0.0.1', last: '10.0.0.0', offset: 0n, want: [] },
    {
      name: 'a carry across the 64-bit halves',
      first: '2001:db8::ffff:ffff:ffff:fffe',
      last: '2001:db8:0:1::1',
      offset: 2n,
      want: ['2001:db8:0:1::', '2001:db8:0:1::1', '2001:db8::ffff:ffff:ffff:fffe', '2001:db8::ffff:ffff:ffff:ffff'],
    },
  ])('$name', ({ first, last, offset, want }) => {
    const next = ipIterator(first, last, offset);
    if (want === null) {
      // too long to walk: check the start and the wrap only
      expect(next()).toBe(first);
      expect(next()).toBe(addOffsetAddress(first, 1n));
      return;
    }
    const got: string[] = [];
    for (let ip = next(); ip !== undefined; ip = next()) got.push(ip);
    expect(got).toEqual(want);
    for (let i = 0; i < 5; i++) expect(next()).toBeUndefined();
  });

  it('rejects ends of different families', () => {
    expect(() => ipIterator('10.0.0.1', '::1', 0n)).toThrow(/different families/);
  });
});

describe('calculateRangeOffset — B12 Test_calculateRangeOffset', () => {
  it.each([
    { name: 'full mask IPv4', cidr: '192.168.1.1/32', want: 0 },
    { name: 'full mask IPv6', cidr: 'fd00::1/128', want: 0 },
    { name: 'very small mask IPv4', cidr: '192.168.1.1/30', want: 0 },
    { name: 'very small mask IPv6', cidr: 'fd00::1/126', want: 0 },
    { name: 'small mask IPv4', cidr: '192.168.1.1/28', want: 0 },
    { name: 'small mask IPv4 (/27)', cidr: '192.168.1.1/27', want: 16 },
    { name: 'small mask IPv6', cidr: 'fd00::1/124', want: 0 },
    { name: 'small mask IPv6 (/122)', cidr: 'fd00::1/122', want: 16 },
    { name: 'medium mask IPv4', cidr: '192.168.1.1/22', want: 64 },
    { name: 'medium mask IPv6', cidr: 'fd00::1/118', want: 64 },
    { name: 'large mask IPv4', cidr: '192.168.1.1/8', want: 256 },
    { name: 'large mask IPv6', cidr: 'fd00::1/12', want: 256 },
    // k8s.io/utils RangeSize is 0 for an IPv4 /0 or /1 and an IPv6 /0 or /1 (and saturates at
    // MaxInt64 below them): no static band there
    { name: 'IPv4 /2', cidr: '0.0.0.0/2', want: 256 },
    { name: 'IPv4 /1', cidr: '128.0.0.0/1', want: 0 },
    { name: 'IPv4 /0', cidr: '0.0.0.0/0', want: 0 },
    { name: 'IPv6 /2', cidr: '::/2', want: 256 },
    { name: 'IPv6 /1', cidr: '8000::/1', want: 0 },
    { name: 'IPv6 /0', cidr: '::/0', want: 0 },
  ])('$name', ({ cidr, want }) => {
    expect(calculateRangeOffset(cidr)).toBe(want);
    expect(Prefix.parse(cidr).rangeOffset).toBe(want);
  });
});

// ═════════════════════════════════════════════════════════════════════════════════════════════
// 2. The derived values of NewIPAllocator
// ═════════════════════════════════════════════════════════════════════════════════════════════

interface GeometryRow {
  name: string;
  cidr: string;
  canonical?: string;
  size: bigint;
  rangeOffset: number;
  first?: string;
  offsetAddress?: string;
  last?: string;
  upper: bigint;
  lower: number;
}

describe('Prefix — the derived values of NewIPAllocator', () => {
  const rows: GeometryRow[] = [
    {
      name: 'IPv4 /24',
      cidr: '192.168.1.0/24',
      size: 254n,
      rangeOffset: 16,
      first: '192.168.1.1',
      offsetAddress: '192.168.1.17',
      last: '192.168.1.254',
      upper: 238n,
      lower: 16,
    },
    {
      name: 'IPv4 /25',
      cidr: '192.168.1.0/25',
      size: 126n,
      rangeOffset: 16,
      first: '192.168.1.1',
      offsetAddress: '192.168.1.17',
      last: '192.168.1.126',
      upper: 110n,
      lower: 16,
    },
    {
      name: 'IPv4 /27 (32/16=2 → 16)',
      cidr: '10.0.0.0/27',
      size: 30n,
      rangeOffset: 16,
      first: '10.0.0.1',
      offsetAddress: '10.0.0.17',
      last: '10.0.0.30',
      upper: 14n,
      lower: 16,
    },
    {
      name: 'IPv4 /28 (no static band)',
      cidr: '10.0.0.0/28',
      size: 14n,
      rangeOffset: 0,
      first: '10.0.0.1',
      offsetAddress: '10.0.0.1',
      last: '10.0.0.14',
      upper: 14n,
      lower: 0,
    },
    {
      name: 'IPv4 /30',
      cidr: '192.168.1.240/30',
      size: 2n,
      rangeOffset: 0,
      first: '192.168.1.241',
      offsetAddress: '192.168.1.241',
      last: '192.168.1.242',
      upper: 2n,
      lower: 0,
    },
    {
      name: 'IPv4 /31 (first > last)',
      cidr: '10.0.0.0/31',
      size: 0n,
      rangeOffset: 0,
      first: '10.0.0.1',
      offsetAddress: '10.0.0.1',
      last: '10.0.0.0',
      upper: 0n,
      lower: 0,
    },
    {
      name: 'IPv4 /32 (first outside, last = network − 1)',
      cidr: '192.168.1.0/32',
      size: 0n,
      rangeOffset: 0,
      first: '192.168.1.1',
      offsetAddress: '192.168.1.1',
      last: '192.168.0.255',
      upper: 0n,
      lower: 0,
    },
    {
      name: 'IPv4 /22',
      cidr: '10.0.0.0/22',
      size: 1022n,
      rangeOffset: 64,
      first: '10.0.0.1',
      offsetAddress: '10.0.0.65',
      last: '10.0.3.254',
      upper: 958n,
      lower: 64,
    },
    {
      name: 'IPv4 /20',
      cidr: '10.0.0.0/20',
      size: 4094n,
      rangeOffset: 256,
      first: '10.0.0.1',
      offsetAddress: '10.0.1.1',
      last: '10.0.15.254',
      upper: 3838n,
      lower: 256,
    },
    {
      name: 'IPv4 /12',
      cidr: '10.96.0.0/12',
      size: 1048574n,
      rangeOffset: 256,
      first: '10.96.0.1',
      offsetAddress: '10.96.1.1',
      last: '10.111.255.254',
      upper: 1048318n,
      lower: 256,
    },
    {
      name: 'IPv4 /0: no static band (k8s.io/utils RangeSize is 0)',
      cidr: '0.0.0.0/0',
      size: 4294967294n,
      rangeOffset: 0,
      first: '0.0.0.1',
      offsetAddress: '0.0.0.1',
      last: '255.255.255.254',
      upper: 4294967294n,
      lower: 0,
    },
    {
      name: 'IPv4 host bits set are masked',
      cidr: '192.168.1.77/24',
      canonical: '192.168.1.0/24',
      size: 254n,
      rangeOffset: 16,
      first: '192.168.1.1',
      offsetAddress: '192.168.1.17',
      last: '192.168.1.254',
      upper: 238n,
      lower: 16,
    },
    {
      name: 'IPv6 /112',
      cidr: '2001:db8::/112',
      size: 65535n,
      rangeOffset: 256,
      first: '2001:db8::1',
      offsetAddress: '2001:db8::101',
      last: '2001:db8::ffff',
      upper: 65279n,
      lower: 256,
    },
    {
      name: 'IPv6 /116',
      cidr: '2001:db8:1::/116',
      size: 4095n,
      rangeOffset: 256,
      first: '2001:db8:1::1',
      offsetAddress: '2001:db8:1::101',
      last: '2001:db8:1::fff',
      upper: 3839n,
      lower: 256,
    },
    {
      name: 'IPv6 /118',
      cidr: 'fd00::/118',
      size: 1023n,
      rangeOffset: 64,
      first: 'fd00::1',
      offsetAddress: 'fd00::41',
      last: 'fd00::3ff',
      upper: 959n,
      lower: 64,
    },
    {
      name: 'IPv6 /120',
      cidr: 'fd00::/120',
      size: 255n,
      rangeOffset: 16,
      first: 'fd00::1',
      offsetAddress: 'fd00::11',
      last: 'fd00::ff',
      upper: 239n,
      lower: 16,
    },
    {
      name: 'IPv6 /122 (64/16=4 → 16)',
      cidr: 'fd00::/122',
      size: 63n,
      rangeOffset: 16,
      first: 'fd00::1',
      offsetAddress: 'fd00::11',
      last: 'fd00::3f',
      upper: 47n,
      lower: 16,
    },
    {
      name: 'IPv6 /124',
      cidr: 'fd00::/124',
      size: 15n,
      rangeOffset: 0,
      first: 'fd00::1',
      offsetAddress: 'fd00::1',
      last: 'fd00::f',
      upper: 15n,
      lower: 0,
    },
    {
      name: 'IPv6 /127',
      cidr: 'fd00::/127',
      size: 1n,
      rangeOffset: 0,
      first: 'fd00::1',
      offsetAddress: 'fd00::1',
      last: 'fd00::1',
      upper: 1n,
      lower: 0,
    },
    {
      name: 'IPv6 /128 (first outside, last = network)',
      cidr: 'fd00::/128',
      size: 0n,
      rangeOffset: 0,
      first: 'fd00::1',
      offsetAddress: 'fd00::1',
      last: 'fd00::',
      upper: 0n,
      lower: 0,
    },
    {
      name: 'IPv6 /65 (MaxInt64)',
      cidr: '2001:db8::/65',
      size: MAX_INT64,
      rangeOffset: 256,
      first: '2001:db8::1',
      offsetAddress: '2001:db8::101',
      last: '2001:db8::7fff:ffff:ffff:ffff',
      upper: MAX_INT64 - 256n,
      lower: 256,
    },
    {
      name: 'IPv6 /64 (MaxUint64)',
      cidr: '2001:db8::/64',
      size: MAX_UINT64,
      rangeOffset: 256,
      first: '2001:db8::1',
      offsetAddress: '2001:db8::101',
      last: '2001:db8::ffff:ffff:ffff:ffff',
      upper: MAX_UINT64 - 256n,
      lower: 256,
    },
    {
      name: 'IPv6 /112 at the top of the family (all-ones last is usable)',
      cidr: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:0/112',
      size: 65535n,
      rangeOffset: 256,
      first: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:1',
      offsetAddress: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:101',
      last: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      upper: 65279n,
      lower: 256,
    },
    {
      name: 'IPv6 fc::/112 (leading-zero-compressed)',
      cidr: '00fc::/112',
      canonical: 'fc::/112',
      size: 65535n,
      rangeOffset: 256,
      first: 'fc::1',
      offsetAddress: 'fc::101',
      last: 'fc::ffff',
      upper: 65279n,
      lower: 256,
    },
  ];

  it.each(rows)('$name', (row) => {
    const p = Prefix.parse(row.cidr);
    expect(p.cidr).toBe(row.canonical ?? row.cidr);
    expect(String(p)).toBe(p.cidr);
    expect(p.size).toBe(row.size);
    expect((BigInt(p.sizeHi) << 32n) | BigInt(p.sizeLo)).toBe(row.size);
    expect(p.size).toBe(row.size); // |[first, last]| = hostsPerNetwork for every prefix ≥ /64
    expect(p.rangeOffset).toBe(row.rangeOffset);
    expect(p.hasFirst && p.hasLast).toBe(true);
    expect(formatAddr(p.version, p.first)).toBe(row.first);
    expect(formatAddr(p.version, p.offsetAddress)).toBe(row.offsetAddress);
    expect(formatAddr(p.version, p.last)).toBe(row.last);
    // Bands: upper = [offsetAddress, last], lower = [first, offsetAddress − 1], by the core's u128_sub.
    const up = coreSub(big(p.last), big(p.offsetAddress));
    expect(typeof up === 'bigint' ? up + 1n : 0n).toBe(row.upper);
    expect(coreSub(big(p.offsetAddress), big(p.first))).toBe(BigInt(row.lower));
    expect(p.isEmpty).toBe(row.size === 0n);
  });

  it.each([
    { name: 'IPv4 all-ones /32', cidr: '255.255.255.255/32', hasFirst: false, hasLast: true, last: '255.255.255.254' },
    {
      name: 'IPv6 all-ones /128',
      cidr: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128',
      hasFirst: false,
      hasLast: true,
      last: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    },
    { name: 'IPv4 0.0.0.0/32 (no last)', cidr: '0.0.0.0/32', hasFirst: true, hasLast: false, last: '0.0.0.0' },
  ])('degenerate: $name', ({ cidr, hasFirst, hasLast, last }) => {
    const p = Prefix.parse(cidr);
    expect(p.hasFirst).toBe(hasFirst);
    expect(p.hasLast).toBe(hasLast);
    expect(p.size).toBe(0n);
    expect(p.size).toBe(0n);
    expect(p.isEmpty).toBe(true);
    expect(formatAddr(p.version, p.last)).toBe(last);
    const w = parseAddr(cidr.slice(0, cidr.indexOf('/'))).words;
    expect(core.prefix_geometry(...words(big(w)), p.length, p.width)).toBe(hasFirst ? OK : NONE);
    if (!hasFirst) expect(INVALID_FIRST_ADDRESS).toBe('invalid address []');
  });

  it('family, width and length', () => {
    const v4 = Prefix.parse('10.96.0.0/12');
    expect([v4.version, v4.family, v4.width, v4.length]).toEqual([4, 'IPv4', 32, 12]);
    const v6 = Prefix.parse('2001:db8::/112');
    expect([v6.version, v6.family, v6.width, v6.length]).toEqual([6, 'IPv6', 128, 112]);
    expect(formatAddr(6, v6.network)).toBe('2001:db8::');
    expect(formatAddr(6, v6.broadcast)).toBe('2001:db8::ffff');
  });

  it('Prefix.from validates its input; Prefix.parse throws InvalidCIDRError', () => {
    expect(() => Prefix.from(4, words(0n), 33)).toThrow(/prefix length/);
    expect(() => Prefix.from(4, words(1n << 32n), 8)).toThrow(/IPv4 address/);
    expect(() => Prefix.from(5 as 4, words(0n), 8)).toThrow(/family/);
    expect(() => Prefix.from(6, words(0n), 1.5)).toThrow(/integer/);
    expect(() => Prefix.parse('10.0.0.0')).toThrow(/ParsePrefix/);
  });

  it('per-address conversions on named addresses', () => {
    const p = Prefix.parse('192.168.1.0/24');
    const out = new Uint32Array(2);
    const at = (a: string) => parseAddr(a);
    expect(p.offsetOf(4, at('192.168.1.1').words, out)).toBe(OK);
    expect([...out]).toEqual([0, 0]);
    expect(p.offsetOf(4, at('192.168.1.254').words, out)).toBe(OK);
    expect([...out]).toEqual([0, 253]);
    for (const outside of ['192.168.1.0', '192.168.1.255', '192.168.0.1', '192.168.2.2']) {
      expect(p.offsetOf(4, at(outside).words, out)).toBe(NONE);
    }
    // the other family is never in range, even with the same words (::c0a8:101)
    expect(p.offsetOf(6, at('192.168.1.1').words, out)).toBe(NONE);
    expect(p.contains(4, at('192.168.1.0').words)).toBe(true);
    expect(p.contains(4, at('192.168.1.255').words)).toBe(true);
    expect(p.inRange(4, at('192.168.1.255').words)).toBe(false);
    expect(p.formatAt(0, 16)).toBe('192.168.1.17');
    expect(() => p.formatAt(0, 254)).toThrow(/outside/);
    const v6 = Prefix.parse('2001:db8::/64');
    expect(v6.formatAt(0xffff_ffff, 0xffff_fffd)).toBe('2001:db8::ffff:ffff:ffff:fffe');
    expect(v6.offsetOf(6, at('2001:db8::ffff:ffff:ffff:ffff').words, out)).toBe(OK);
    expect([...out]).toEqual([0xffff_ffff, 0xffff_fffe]);
    const wide = Prefix.parse('2001:db8::/48');
    expect(wide.offsetOf(6, at('2001:db8:0:1::1').words, out)).toBe(TOO_FAR);
  });
});

// ═════════════════════════════════════════════════════════════════════════════════════════════
// 3. Properties: the core against the BigInt reference
// ═════════════════════════════════════════════════════════════════════════════════════════════

describe('u128 properties (core vs BigInt reference)', () => {
  it('u128_add = a + offset, NONE when the sum leaves the family width', () => {
    fc.assert(
      fc.property(
        widthArb.chain((w) => fc.tuple(fc.constant(w), addrArb(w), offsetArb)),
        ([width, a, off]) => {
          const want = refAdd(a, off, width);
          expect(coreAdd(a, off, width)).toBe(want === undefined ? NONE : want);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('u128_add boundaries: 2^63, 2^64 − 1, all-ones', () => {
    expect(coreAdd(0n, 1n << 63n, 128)).toBe(1n << 63n);
    expect(coreAdd(1n, MAX_UINT64, 128)).toBe(1n << 64n); // carries into hi
    expect(coreAdd(ALL_ONES - MAX_UINT64, MAX_UINT64, 128)).toBe(ALL_ONES);
    expect(coreAdd(ALL_ONES - MAX_UINT64 + 1n, MAX_UINT64, 128)).toBe(NONE);
    expect(coreAdd(ALL_ONES, 0n, 128)).toBe(ALL_ONES);
    expect(coreAdd(ALL_ONES, 1n, 128)).toBe(NONE);
    expect(coreAdd(0xffff_ffffn, 0n, 32)).toBe(0xffff_ffffn);
    expect(coreAdd(0xffff_ffffn, 1n, 32)).toBe(NONE);
    expect(coreAdd(0n, MAX_UINT64, 32)).toBe(NONE);
    expect(coreAdd(1n << 32n, 0n, 32)).toBe(OUT_OF_RANGE); // not an IPv4 value
    expect(coreAdd(0n, 0n, 64 as Width)).toBe(OUT_OF_RANGE); // not a family width
  });

  it('u128_sub = a − b as a u64, NONE when a < b, TOO_FAR at ≥ 2^64', () => {
    const pair = fc.oneof(
      fc.tuple(addrArb(128), addrArb(128)),
      // close pairs, across the 2^64 boundary of the difference
      fc
        .tuple(addrArb(128), fc.oneof(fc.constantFrom(...EDGE_U64, 1n << 64n, (1n << 64n) + 1n), fc.bigInt({ min: 0n, max: 1n << 66n })))
        .map(([b, d]) => [b, b + d <= ALL_ONES ? b + d : ALL_ONES] as [bigint, bigint])
        .chain(([b, a]) => fc.constantFrom<[bigint, bigint]>([a, b], [b, a])),
    );
    fc.assert(
      fc.property(pair, ([a, b]) => {
        expect(coreSub(a, b)).toBe(refSub(a, b));
      }),
      { numRuns: 3000 },
    );
    expect(coreSub(MAX_UINT64, 0n)).toBe(MAX_UINT64);
    expect(coreSub(1n << 64n, 0n)).toBe('too far');
    expect(coreSub(ALL_ONES, ALL_ONES - MAX_UINT64)).toBe(MAX_UINT64);
    expect(coreSub(ALL_ONES, 0n)).toBe('too far');
    expect(coreSub(1n << 64n, MAX_UINT64)).toBe(1n); // borrow from hi
  });

  it('u128_cmp orders addresses as unsigned 128-bit numbers', () => {
    fc.assert(
      fc.property(addrArb(128), addrArb(128), (a, b) => {
        expect(core.u128_cmp(...words(a), ...words(b))).toBe(a < b ? -1 : a > b ? 1 : 0);
        expect(core.u128_cmp(...words(a), ...words(a))).toBe(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('u128_next / u128_prev step by one inside the family and stop at its ends', () => {
    fc.assert(
      fc.property(
        widthArb.chain((w) => fc.tuple(fc.constant(w), addrArb(w))),
        ([width, a]) => {
          const max = (1n << BigInt(width)) - 1n;
          const n = core.u128_next(...words(a), width);
          if (a === max) expect(n).toBe(NONE);
          else expect([n, scratchAddr()]).toEqual([OK, a + 1n]);
          const p = core.u128_prev(...words(a), width);
          if (a === 0n) expect(p).toBe(NONE);
          else expect([p, scratchAddr()]).toEqual([OK, a - 1n]);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('prefix geometry properties (core vs BigInt reference)', () => {
  it('prefix_geometry matches the reference for every field', () => {
    fc.assert(
      fc.property(prefixArb, ({ width, a, bits }) => {
        const want = refGeometry(a, bits, width);
        const st = core.prefix_geometry(...words(a), bits, width);
        expect(st).toBe(want.first === undefined ? NONE : OK);
        const s = Uint32Array.from(scratch().subarray(0, 26));
        const addrAt = (i: number) => big(s.subarray(i, i + 4));
        const u64At = (i: number) => (BigInt(s[i]!) << 32n) | BigInt(s[i + 1]!);
        expect(addrAt(0)).toBe(want.network);
        expect(addrAt(4)).toBe(want.broadcast);
        expect(addrAt(8)).toBe(want.first ?? 0n);
        expect(addrAt(12)).toBe(want.last ?? 0n);
        expect(addrAt(16)).toBe(want.offsetAddress ?? 0n);
        expect(u64At(20)).toBe(want.size);
        expect(s[22]).toBe(want.rangeOffset);
        expect(u64At(24)).toBe(want.count);
        expect(s[23]! & 1).toBe(want.first === undefined ? 1 : 0);
        expect(s[23]! & 2).toBe(want.last === undefined ? 2 : 0);
        // upstream coherence: |[first, last]| is hostsPerNetwork (saturated alike)
        expect(want.count).toBe(want.size);
        // the single-value exports agree with the full geometry
        expect(core.prefix_range_offset(bits, width)).toBe(want.rangeOffset);
        expect(core.prefix_hosts(bits, width)).toBe(OK);
        expect(scratchU64()).toBe(want.size);
      }),
      { numRuns: 3000 },
    );
  });

  it('bad widths and lengths are OUT_OF_RANGE', () => {
    expect(core.prefix_geometry(0, 0, 0, 0, 33, 32)).toBe(OUT_OF_RANGE);
    expect(core.prefix_geometry(0, 0, 0, 0, -1, 128)).toBe(OUT_OF_RANGE);
    expect(core.prefix_geometry(0, 0, 0, 0, 8, 64)).toBe(OUT_OF_RANGE);
    expect(core.prefix_hosts(129, 128)).toBe(OUT_OF_RANGE);
    expect(core.prefix_range_offset(33, 32)).toBe(OUT_OF_RANGE);
  });

  it('Prefix conversions (offsetOf, addressAt, formatAt) give the core u128 answers, the edges included', () => {
    const probe = prefixArb.chain(({ width, a, bits }) => {
      const g = refGeometry(a, bits, width);
      const lo = g.network > 3n ? g.network - 3n : 0n;
      const max = (1n << BigInt(width)) - 1n;
      const hi = g.broadcast + 3n < max ? g.broadcast + 3n : max;
      return fc.record({
        width: fc.constant(width),
        a: fc.constant(a),
        bits: fc.constant(bits),
        addr: fc.oneof(fc.bigInt({ min: lo, max: hi }), fc.constantFrom(lo, hi, g.network, g.broadcast, g.first ?? 0n, g.last ?? 0n)),
        offset: fc.oneof(
          offsetArb,
          fc.constantFrom(g.count, g.count - 1n, g.size - BigInt(g.rangeOffset)).filter((x) => x >= 0n),
        ),
      });
    });
    const out = new Uint32Array(4);
    fc.assert(
      fc.property(probe, ({ width, a, bits, addr, offset }) => {
        const version = width === 32 ? 4 : 6;
        const p = Prefix.from(version, words(a), bits);
        const first = big(p.first);
        const last = big(p.last);
        const inRange = p.hasFirst && p.hasLast && first <= addr && addr <= last;
        // address → offset
        const st = p.offsetOf(version, words(addr), out);
        if (!inRange) {
          expect(st).toBe(NONE);
        } else {
          const want = coreSub(addr, first);
          if (want === 'too far') expect(st).toBe(TOO_FAR);
          else expect([st, (BigInt(out[0]!) << 32n) | BigInt(out[1]!)]).toEqual([OK, want]);
        }
        expect(p.inRange(version, words(addr))).toBe(inRange);
        expect(p.contains(version, words(addr))).toBe(big(p.network) <= addr && addr <= big(p.broadcast));
        // offset → address
        const ok = p.addressAt(...hiLo(offset), out);
        expect(ok).toBe(offset < p.size);
        if (ok) {
          const sum = coreAdd(first, offset, width);
          expect(big(out)).toBe(sum);
          expect(big(out) <= last).toBe(true);
          expect(p.formatAt(...hiLo(offset))).toBe(text(sum as bigint, width));
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('iterator properties (core vs BigInt reference)', () => {
  const rangeArb = widthArb.chain((width) => {
    const max = (1n << BigInt(width)) - 1n;
    return fc
      .record({
        width: fc.constant(width),
        first: fc.oneof(
          addrArb(width),
          fc.bigInt({ min: 0n, max: 70n }).map((d) => max - d),
          fc.constant((1n << 64n) - 5n),
        ),
        len: fc.integer({ min: 1, max: 70 }),
        offset: fc.oneof(fc.bigInt({ min: 0n, max: 80n }), offsetArb),
      })
      .map((r) => ({ ...r, last: r.first + BigInt(r.len) - 1n <= max ? r.first + BigInt(r.len) - 1n : max }));
  });

  it('yields the reference sequence: start … last, first … start − 1, then NONE', () => {
    fc.assert(
      fc.property(rangeArb, ({ width, first, last, offset }) => {
        expect(coreIter(first, last, offset, width)).toEqual(refIter(first, last, offset, width));
      }),
      { numRuns: 1500 },
    );
  });

  it('each address of [first, last] exactly once, in wraparound order, whenever the start exists', () => {
    fc.assert(
      fc.property(rangeArb, ({ width, first, last, offset }) => {
        const got = coreIter(first, last, offset, width);
        if (refAdd(first, offset, width) === undefined) {
          expect(got).toEqual([]);
          return;
        }
        const n = Number(last - first + 1n);
        expect(got.length).toBe(n);
        expect(new Set(got).size).toBe(n);
        for (const a of got) expect(a >= first && a <= last).toBe(true);
        // exactly one descent, from last to first (or none when it starts at first)
        let descents = 0;
        for (let i = 1; i < got.length; i++) {
          if (got[i]! === got[i - 1]! + 1n) continue;
          expect([got[i - 1], got[i]]).toEqual([last, first]);
          descents++;
        }
        expect(descents).toBe(got[0] === first ? 0 : 1);
      }),
      { numRuns: 1500 },
    );
  });

  it('an empty range (first > last) or a bad width yields nothing', () => {
    expect(coreIter(5n, 4n, 0n, 32)).toEqual([]);
    expect(coreIter(0n, 4n, 0n, 64 as Width)).toEqual([]);
    expect(coreIter(1n << 40n, (1n << 40n) + 2n, 0n, 32)).toEqual([]);
  });

  it('iterators are independent: each step is computed from the addresses passed, nothing is kept', () => {
    const before = core.heap_bytes_in_use();
    const a = { first: 10n, last: 12n, cur: 0n, start: 0n };
    const b = { first: 20n, last: 22n, cur: 0n, start: 0n };
    expect(core.iter_start(...words(a.first), ...words(a.last), 0, 0, 32)).toBe(OK);
    a.start = a.cur = scratchAddr();
    expect(core.iter_start(...words(b.first), ...words(b.last), 0, 1, 32)).toBe(OK);
    b.start = b.cur = scratchAddr();
    const seq: bigint[] = [a.cur, b.cur];
    for (let i = 0; i < 2; i++) {
      for (const it of [a, b]) {
        expect(core.iter_step(...words(it.cur), ...words(it.first), ...words(it.last), ...words(it.start))).toBe(OK);
        it.cur = scratchAddr();
        seq.push(it.cur);
      }
    }
    expect(seq).toEqual([10n, 21n, 11n, 22n, 12n, 20n]);
    // the step after the last address is the start: done, and the scratch window is left alone
    scratch()[0] = 7;
    expect(core.iter_step(...words(a.cur), ...words(a.first), ...words(a.last), ...words(a.start))).toBe(NONE);
    expect(scratch()[0]).toBe(7);
    expect(core.heap_bytes_in_use()).toBe(before);
  });
});
