// Prefix geometry on the TypeScript side: a `Prefix` value built once per Service CIDR, the
// per-address conversions the allocator runs on every call (address ⇄ offset), and the upstream
// helper functions (addOffsetAddress, broadcastAddress, hostsPerNetwork, calculateRangeOffset,
// ipIterator; cidrallocator.go's isNotContained) for tests and users.
//
//   network  first               offsetAddress                       last  broadcast
//      │       │◂── rangeOffset ──▸│◂─────── count − rangeOffset ──────▸│       │
//      ▼       ▼                   ▼                                    ▼       ▼
//      ┌───────┬───────────────────┬────────────────────────────────────┬───────┐
//      │ net   │ lower (static)    │ upper (dynamic)                    │ bcast │   IPv4
//      └───────┴───────────────────┴────────────────────────────────────┴───────┘
//   offset 0 = first; IPv6 has no broadcast (last = broadcast).
//
// The offset and prefix math comes from the WebAssembly core (core-as/u128.ts, prefix.ts,
// iter.ts); there is no second copy here, only comparisons of address words and a BigInt test
// of the IPv4-mapped block when a range is made. The allocators' hot path does not come through this file at all: it crosses
// once per operation into core-as/space.ts with address words (adapters/space.ts). `offsetOf`,
// `addressAt` and `formatAt` below are the cold-path conversions (tests, tools), one core call each.
//
// Addresses are four u32 words, w0 = bits 127..96 (IPv4: [0, 0, 0, v4]); the family travels
// beside the words as 4 | 6, as `parseAddrInto` returns it. Offsets are u64 as (hi, lo) u32 pairs.

import { type Family, formatAddr, formatPrefix, parseAddrInto, parsePrefix } from './address.ts';
import { InvalidArgumentError, InvalidRangeError } from './errors.ts';
import { quoteInput } from './quote.ts';
import type { IPFamily } from './types.ts';
import { core, coreConstant, NONE, OK, OUT_OF_RANGE, scratch, TOO_FAR } from './wasm.ts';

/** Scratch words written by the core's prefix_geometry (core-as/prefix.ts GEO_*, read from the core). @internal */
export const GEO = Object.freeze({
  NETWORK: coreConstant('GEO_NETWORK'),
  BROADCAST: coreConstant('GEO_BROADCAST'),
  FIRST: coreConstant('GEO_FIRST'),
  LAST: coreConstant('GEO_LAST'),
  OFFSET_ADDRESS: coreConstant('GEO_OFFSET_ADDRESS'),
  SIZE: coreConstant('GEO_SIZE'),
  RANGE_OFFSET: coreConstant('GEO_RANGE_OFFSET'),
  FLAGS: coreConstant('GEO_FLAGS'),
  COUNT: coreConstant('GEO_COUNT'),
});
/** prefix_geometry flags (core-as/prefix.ts FLAG_*, read from the core). @internal */
export const GEO_FLAG_NO_FIRST = coreConstant('FLAG_NO_FIRST');
/** @internal */
export const GEO_FLAG_NO_LAST = coreConstant('FLAG_NO_LAST');
/** @internal */
export const GEO_FLAG_COUNT_SATURATED = coreConstant('FLAG_COUNT_SATURATED');

/**
 * Upstream's NewIPAllocator error for a prefix whose first address does not exist
 * (255.255.255.255/32, ffff:…:ffff/128): addOffsetAddress of the invalid Addr prints its empty
 * byte slice.
 * @internal
 */
export const INVALID_FIRST_ADDRESS = 'invalid address []';

/**
 * The refusal of the prefix `cidr` (255.255.255.255/32 or ffff:…:ffff/128): upstream's
 * INVALID_FIRST_ADDRESS, followed by what it leaves out — which range, why, and what to give
 * instead — as the error's `reason`. The one statement of this refusal: rangeRefusal (the
 * Allocator, a MetaAllocator's skipped() and onSkip) and the reference allocator throw it.
 * @internal
 */
export function invalidFirstAddressError(cidr: string): InvalidRangeError {
  const length = cidr.slice(cidr.lastIndexOf('/'));
  return new InvalidRangeError(
    `${cidr} has no usable address: a ${length} holds only its network address, and the address after it, where the range would start, does not exist; use a shorter prefix`,
    INVALID_FIRST_ADDRESS,
  );
}

const U64_MAX = (1n << 64n) - 1n;

function wordsAt(s: Uint32Array, at: number): Uint32Array {
  return Uint32Array.of(s[at]!, s[at + 1]!, s[at + 2]!, s[at + 3]!);
}

function u64(hi: number, lo: number): bigint {
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/**
 * A Service CIDR's geometry, computed once by the core (`prefix_geometry`) and then read as plain
 * fields. A value: immutable by contract (the word arrays must not be written), equal prefixes
 * have equal fields. Built with `Prefix.parse("10.96.0.0/12")` or `Prefix.from(4, words, 12)`;
 * host bits in the input are masked away, as netip.ParsePrefix(…).Masked() does.
 *
 * Degenerate prefixes keep upstream's values: /31, /32 and IPv6 /128 have first > last (count 0);
 * 0.0.0.0/32 has no last address (`hasLast` false, `last` all zero); 255.255.255.255/32 and
 * ffff:…:ffff/128 have no first address (`hasFirst` false, `first` and `offsetAddress` all zero),
 * which upstream's constructor rejects with `invalid address []` (INVALID_FIRST_ADDRESS).
 * @internal
 */
export class Prefix {
  /** 4 or 6, as `parseAddrInto` returns it. */
  readonly version: Family;
  readonly family: IPFamily;
  /** Bits in an address of the family: 32 or 128. */
  readonly width: 32 | 128;
  /** Prefix length (the `/n`). */
  readonly length: number;
  /** Canonical masked text, e.g. "10.96.0.0/12", "2001:db8::/112" (upstream prefix.String()). */
  readonly cidr: string;
  /** address & mask. */
  readonly network: Uint32Array;
  /** network | host bits (upstream broadcastAddress; also for IPv6). */
  readonly broadcast: Uint32Array;
  /** network + 1: offset 0 of the range. All zero when `hasFirst` is false. */
  readonly first: Uint32Array;
  /** IPv4 broadcast − 1, IPv6 broadcast: the range is the closed interval [first, last]. */
  readonly last: Uint32Array;
  /** first + rangeOffset: the first address of the dynamic band. */
  readonly offsetAddress: Uint32Array;
  /** False only for the all-ones single-address prefix (network + 1 does not exist). */
  readonly hasFirst: boolean;
  /** False only for 0.0.0.0/32 (0.0.0.0 − 1 does not exist). */
  readonly hasLast: boolean;
  /**
   * Usable addresses, upstream hostsPerNetwork: IPv4 2^h − 2, IPv6 2^h − 1, ≥ 0, ≤ 2^64 − 1 —
   * also the offsets in [first, last] (the core computes both; test/core-math checks they are
   * equal for every prefix), as a bigint and as (hi, lo) for the hot path.
   */
  readonly size: bigint;
  readonly sizeHi: number;
  readonly sizeLo: number;
  /** KEP-3070 static band size (upstream calculateRangeOffset): 0 or 16..256. */
  readonly rangeOffset: number;

  // The words of first and last as numbers, for the hot path.
  readonly #f0: number;
  readonly #f1: number;
  readonly #f2: number;
  readonly #f3: number;
  readonly #l0: number;
  readonly #l1: number;
  readonly #l2: number;
  readonly #l3: number;
  readonly #empty: boolean;
  readonly #tmp = new Uint32Array(4);

  private constructor(version: Family, words: ArrayLike<number>, bits: number) {
    const width = version === 4 ? 32 : 128;
    const st = core.prefix_geometry(words[0]!, words[1]!, words[2]!, words[3]!, bits, width);
    if (st === OUT_OF_RANGE) {
      throw new InvalidArgumentError(
        `prefix length must be an integer in 0..${width} and the address an IPv${version} address, got ${bits}`,
      );
    }
    const s = scratch();
    this.network = wordsAt(s, GEO.NETWORK);
    this.broadcast = wordsAt(s, GEO.BROADCAST);
    this.first = wordsAt(s, GEO.FIRST);
    this.last = wordsAt(s, GEO.LAST);
    this.offsetAddress = wordsAt(s, GEO.OFFSET_ADDRESS);
    this.sizeHi = s[GEO.SIZE]!;
    this.sizeLo = s[GEO.SIZE + 1]!;
    this.rangeOffset = s[GEO.RANGE_OFFSET]!;
    const flags = s[GEO.FLAGS]!;

    this.version = version;
    this.family = version === 4 ? 'IPv4' : 'IPv6';
    this.width = width;
    this.length = bits;
    this.hasFirst = (flags & GEO_FLAG_NO_FIRST) === 0;
    this.hasLast = (flags & GEO_FLAG_NO_LAST) === 0;
    this.size = u64(this.sizeHi, this.sizeLo);
    this.cidr = formatPrefix(version, this.network, bits);
    const f = this.first;
    const l = this.last;
    this.#f0 = f[0]!;
    this.#f1 = f[1]!;
    this.#f2 = f[2]!;
    this.#f3 = f[3]!;
    this.#l0 = l[0]!;
    this.#l1 = l[1]!;
    this.#l2 = l[2]!;
    this.#l3 = l[3]!;
    this.#empty = this.sizeHi === 0 && this.sizeLo === 0;
  }

  /** Parses CIDR text (netip.ParsePrefix rules; see adapters/address.ts). Throws InvalidCIDRError. */
  static parse(cidr: unknown): Prefix {
    const p = parsePrefix(cidr);
    return new Prefix(p.family, p.words, p.bits);
  }

  /** A prefix from address words and a length. Throws InvalidArgumentError on a bad family or length. */
  static from(version: Family, words: ArrayLike<number>, bits: number): Prefix {
    if (version !== 4 && version !== 6) {
      throw new InvalidArgumentError(`address family must be 4 or 6, got ${String(version)}`);
    }
    if (!Number.isInteger(bits)) {
      throw new InvalidArgumentError(`prefix length must be an integer, got ${String(bits)}`);
    }
    return new Prefix(version, words, bits);
  }

  /** Whether [first, last] is empty (/31, /32, /128, and the degenerate prefixes). */
  get isEmpty(): boolean {
    return this.#empty;
  }

  /** Whether the address is inside the prefix at all, network and broadcast included (netip Prefix.Contains). */
  contains(version: Family, w: ArrayLike<number>): boolean {
    if (version !== this.version) return false;
    const n = this.network;
    const b = this.broadcast;
    return (
      cmp4(w[0]!, w[1]!, w[2]!, w[3]!, n[0]!, n[1]!, n[2]!, n[3]!) >= 0 && cmp4(w[0]!, w[1]!, w[2]!, w[3]!, b[0]!, b[1]!, b[2]!, b[3]!) <= 0
    );
  }

  /** Whether the address is in the closed range [first, last] (what Allocate accepts). */
  inRange(version: Family, w: ArrayLike<number>): boolean {
    if (version !== this.version || this.#empty) return false;
    const a0 = w[0]!,
      a1 = w[1]!,
      a2 = w[2]!,
      a3 = w[3]!;
    return (
      cmp4(a0, a1, a2, a3, this.#f0, this.#f1, this.#f2, this.#f3) >= 0 && cmp4(a0, a1, a2, a3, this.#l0, this.#l1, this.#l2, this.#l3) <= 0
    );
  }

  /**
   * The offset of an address from `first` (one core call: u128_sub). Returns OK with the offset
   * as (hi, lo) in out[0], out[1]; NONE when the address is of the other family or outside
   * [first, last] (upstream ErrNotInRange); TOO_FAR when it is inside but 2^64 or more away
   * (only in IPv6 prefixes shorter than /64, which the allocator rejects). `w` holds u32 words;
   * for version 4 they must be [0, 0, 0, v4], as parseAddrInto writes them.
   */
  offsetOf(version: Family, w: ArrayLike<number>, out: Uint32Array): number {
    if (!this.inRange(version, w)) return NONE;
    const f = this.first;
    const st = core.u128_sub(w[0]!, w[1]!, w[2]!, w[3]!, f[0]!, f[1]!, f[2]!, f[3]!);
    if (st !== OK) return st === TOO_FAR ? TOO_FAR : NONE;
    const s = scratch();
    out[0] = s[0]!;
    out[1] = s[1]!;
    return OK;
  }

  /**
   * The address at offset (hi, lo) from `first`: writes its words to out[0..3] and returns true,
   * or returns false when the offset is not below the count (not in [first, last]). hi and lo
   * are u32 numbers.
   */
  addressAt(hi: number, lo: number, out: Uint32Array): boolean {
    if (hi > this.sizeHi || (hi === this.sizeHi && lo >= this.sizeLo)) return false;
    const f = this.first;
    if (core.u128_add(f[0]!, f[1]!, f[2]!, f[3]!, hi, lo, this.width) !== OK) return false; // first + offset ≤ last: never
    const s = scratch();
    out[0] = s[0]!;
    out[1] = s[1]!;
    out[2] = s[2]!;
    out[3] = s[3]!;
    return true;
  }

  /**
   * Canonical text of the address at offset (hi, lo) from `first` (the IPAddress object name).
   * Throws InvalidArgumentError when the offset is not in [0, count).
   */
  formatAt(hi: number, lo: number): string {
    const t = this.#tmp;
    if (!this.addressAt(hi, lo, t)) {
      throw new InvalidArgumentError(`offset ${u64(hi, lo)} is outside [0, ${this.size}) of ${this.cidr}`);
    }
    return formatAddr(this.version, t);
  }

  /** The canonical CIDR text. */
  toString(): string {
    return this.cidr;
  }
}

/** −1, 0, 1 comparing two addresses given as u32 words (big-endian; IPv4 as [0, 0, 0, v4]). @internal */
export function cmp4(a0: number, a1: number, a2: number, a3: number, b0: number, b1: number, b2: number, b3: number): number {
  if (a0 !== b0) return a0 < b0 ? -1 : 1;
  if (a1 !== b1) return a1 < b1 ? -1 : 1;
  if (a2 !== b2) return a2 < b2 ? -1 : 1;
  if (a3 !== b3) return a3 < b3 ? -1 : 1;
  return 0;
}

// ── the wraparound iterator ───────────────────────────────────────────────────────────────────

/** ::ffff:0:0 as a 128-bit value. */
const IPV4_MAPPED_BLOCK = 0xffffn << 32n;

/**
 * Upstream NewIPAllocator's refusal of an IPv6 range shorter than /64 (its offsets are 64-bit):
 * the InvalidRangeError message for such a prefix, else undefined. Part of rangeRefusal; the
 * reference allocator asks it on its own.
 * @internal
 */
export function shortIPv6RangeRefusal(version: Family, length: number): string | undefined {
  return version === 6 && length < 64 ? `shortest allowed prefix length for service CIDR is 64, got ${length}` : undefined;
}

/**
 * Refuses an IPv6 prefix that overlaps the IPv4-mapped block ::ffff:0:0/96 (`::/64`, `::/80`,
 * `::fffe:0:0/95`, …) with InvalidRangeError; any other prefix passes.
 *
 * Why: an address of that block is the IPv4 address in IPv6 clothing. Go's `net.IP.String()`
 * (upstream's Release and Has) writes it as the dotted IPv4 text, `netip.Addr.String()`
 * (upstream's AllocateNext) as `::ffff:1.2.3.4`, and strict IP validation (KEP-4858,
 * apimachinery `pkg/util/validation/ip.go`: "must not be an IPv4-mapped IPv6 address") refuses
 * such IPAddress names. An IPv6 range over the block would hand out names that every text entry
 * point reads back as IPv4: a release would miss its own record and could delete another
 * family's. Range and the reference allocator call this; Allocator and MetaAllocator refuse it
 * through rangeRefusal. ServiceCIDR validation does not: the API server stores such a ServiceCIDR
 * (its validation refuses only a prefix whose address is IPv4-mapped), and a MetaAllocator skips it.
 * @internal
 */
export function refuseIPv4MappedOverlap(p: Prefix): void {
  const overlap = ipv4MappedOverlap(p);
  if (overlap !== undefined) throw new InvalidRangeError(overlap);
}

/** refuseIPv4MappedOverlap's message for `p`, or undefined when `p` does not overlap the block. */
function ipv4MappedOverlap(p: Prefix): string | undefined {
  if (p.version !== 6) return undefined;
  // Compare the first min(length, 96) bits of the network with those of ::ffff:0:0.
  const net = (BigInt(p.network[0]!) << 96n) | (BigInt(p.network[1]!) << 64n) | (BigInt(p.network[2]!) << 32n);
  const shift = BigInt(128 - Math.min(p.length, 96));
  if (net >> shift !== IPV4_MAPPED_BLOCK >> shift) return undefined;
  return `${p.cidr} overlaps the IPv4-mapped block ::ffff:0:0/96, whose addresses name IPv4 addresses; use an IPv6 range outside it`;
}

/**
 * Why Allocator and ReferenceAllocator refuse the range of `p` (and a MetaAllocator skips it), or
 * undefined when they take it (Range takes more: any prefix): upstream NewIPAllocator's
 * refusals — an IPv6 prefix shorter than /64 (shortIPv6RangeRefusal), a prefix whose first
 * address does not exist (255.255.255.255/32, ffff:…:ffff/128: invalidFirstAddressError,
 * upstream's INVALID_FIRST_ADDRESS followed by the range and the cause) — then
 * ours, an IPv6 prefix overlapping the IPv4-mapped block (refuseIPv4MappedOverlap says why), in
 * that order. The one statement of the rule: Allocator throws this error, a MetaAllocator skips
 * such a range with it (rangeSkipReason in meta-allocator.ts), and the command line's `status`
 * and `map` show that skip reason.
 * @internal
 */
export function rangeRefusal(p: Prefix): InvalidRangeError | undefined {
  const short = shortIPv6RangeRefusal(p.version, p.length);
  if (short !== undefined) return new InvalidRangeError(short);
  if (!p.hasFirst) return invalidFirstAddressError(p.cidr);
  const overlap = ipv4MappedOverlap(p);
  return overlap === undefined ? undefined : new InvalidRangeError(overlap);
}

// ── upstream helpers (cold path: text and BigInt at the edge, math in the core) ─────────────

function checkOffset(offset: unknown): bigint {
  if (typeof offset !== 'bigint' || offset < 0n || offset > U64_MAX) {
    throw new InvalidArgumentError(`offset must be a bigint in [0, 2^64 − 1], got ${quoteInput(offset)}`);
  }
  return offset;
}

/** Go's `%v` of the big-endian minimal bytes of a non-negative bigint: `[1 0 0 0 0]`. */
function goBytes(v: bigint): string {
  const bytes: number[] = [];
  for (; v > 0n; v >>= 8n) bytes.unshift(Number(v & 255n));
  return `[${bytes.join(' ')}]`;
}

/**
 * addr + offset (upstream addOffsetAddress), offset an unsigned 64-bit bigint. Throws
 * InvalidAddressError on bad text, InvalidArgumentError on a bad offset or when the sum leaves
 * the family (message as upstream: `invalid address [1 0 0 0 0]` for 255.255.255.255 + 1).
 */
export function addOffsetAddress(addr: string, offset: bigint): string {
  const w = new Uint32Array(4);
  const version = parseAddrInto(addr, w);
  const off = checkOffset(offset);
  const st = core.u128_add(w[0]!, w[1]!, w[2]!, w[3]!, Number(off >> 32n), Number(off & 0xffff_ffffn), version === 4 ? 32 : 128);
  if (st !== OK) {
    const a = (u64(w[0]!, w[1]!) << 64n) | u64(w[2]!, w[3]!);
    throw new InvalidArgumentError(`invalid address ${goBytes(a + off)}`);
  }
  return formatAddr(version, scratch());
}

/** The all-host-bits-set address of a CIDR (upstream broadcastAddress; IPv6 too). Throws InvalidCIDRError. */
export function broadcastAddress(cidr: string): string {
  const p = Prefix.parse(cidr);
  return formatAddr(p.version, p.broadcast);
}

/** Usable addresses of a CIDR (upstream hostsPerNetwork): IPv4 2^h − 2, IPv6 2^h − 1, floored at 0, capped at 2^64 − 1. */
export function hostsPerNetwork(cidr: string): bigint {
  const p = parsePrefix(cidr);
  const st = core.prefix_hosts(p.bits, p.family === 4 ? 32 : 128);
  if (st !== OK) throw new InvalidArgumentError(`bad prefix ${cidr}`); // parsePrefix already bounded bits
  const s = scratch();
  return u64(s[0]!, s[1]!);
}

/** KEP-3070 static band size of a CIDR (upstream calculateRangeOffset): 0, or 16..256. */
export function calculateRangeOffset(cidr: string): number {
  const p = parsePrefix(cidr);
  return core.prefix_range_offset(p.bits, p.family === 4 ? 32 : 128);
}

/**
 * Upstream ipIterator(first, last, offset): a function returning the next address text, then
 * `undefined` forever (Go returns the invalid Addr). It starts at first + offset (at first when
 * that is past last), walks to last, wraps to first and stops before the start, yielding each
 * address once; it yields nothing when first + offset leaves the family. Both ends must be of
 * one family (InvalidArgumentError otherwise). Differences from upstream: first > last yields
 * nothing (upstream yields `first` once; the allocators never ask that), and a range ending at
 * ffff:…:ffff wraps like any other (upstream stops at the end of the family, and so does its
 * allocator's scan; ours wraps there too — docs/semantics.md lists the difference).
 *
 * Like upstream's closure it holds nothing but its own values: the four addresses live in the
 * closure and the core computes each step from them (core-as/iter.ts), so an iterator dropped
 * half-way holds no WebAssembly memory and needs no destroy().
 */
export function ipIterator(first: string, last: string, offset: bigint): () => string | undefined {
  const f = new Uint32Array(4);
  const l = new Uint32Array(4);
  const version = parseAddrInto(first, f);
  if (parseAddrInto(last, l) !== version) {
    throw new InvalidArgumentError(`ipIterator: ${first} and ${last} are of different families`);
  }
  const off = checkOffset(offset);
  const st = core.iter_start(
    f[0]!,
    f[1]!,
    f[2]!,
    f[3]!,
    l[0]!,
    l[1]!,
    l[2]!,
    l[3]!,
    Number(off >> 32n),
    Number(off & 0xffff_ffffn),
    version === 4 ? 32 : 128,
  );
  if (st !== OK) return () => undefined;
  const start = Uint32Array.from(scratch().subarray(0, 4));
  const cur = Uint32Array.from(start); // the address the next call yields, until done
  let done = false;
  return () => {
    if (done) return undefined;
    const text = formatAddr(version, cur);
    const step = core.iter_step(
      cur[0]!,
      cur[1]!,
      cur[2]!,
      cur[3]!,
      f[0]!,
      f[1]!,
      f[2]!,
      f[3]!,
      l[0]!,
      l[1]!,
      l[2]!,
      l[3]!,
      start[0]!,
      start[1]!,
      start[2]!,
      start[3]!,
    );
    if (step === OK) cur.set(scratch().subarray(0, 4));
    else done = true; // back at the start: every address was yielded once
    return text;
  };
}

/**
 * Upstream `isNotContained` (cidrallocator.go): true when no other prefix of `prefixes` contains
 * `prefix` (equal prefixes are skipped). A prefix is contained when it overlaps a prefix at most
 * as long. Prefixes are compared masked (`10.0.0.1/24` equals `10.0.0.0/24`). Throws
 * InvalidCIDRError for malformed text, InvalidArgumentError when `prefixes` is not an array.
 */
export function isNotContained(prefix: string, prefixes: readonly string[]): boolean {
  if (!Array.isArray(prefixes)) throw new InvalidArgumentError(`prefixes must be an array of CIDR strings, got ${quoteInput(prefixes)}`);
  const p = Prefix.parse(prefix);
  return notContained(
    p,
    prefixes.map((q) => Prefix.parse(q)),
  );
}

/** isNotContained on parsed prefixes (a MetaAllocator's top-level ranges). @internal */
export function notContained(p: Prefix, all: readonly Prefix[]): boolean {
  for (const q of all) {
    if (q.cidr === p.cidr) continue;
    // q overlaps p and is at most as long ⇔ q contains p's network address
    if (q.length <= p.length && q.contains(p.version, p.network)) return false;
  }
  return true;
}
