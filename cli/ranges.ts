// Where an address falls: which ServiceCIDR range, which band. Shared by `status` (counts per
// range and band) and `check` (is a ClusterIP inside any ServiceCIDR): both read the ranges of a
// ServiceCIDR through rangesOf and place an address in one by holds, so they cannot disagree on
// whether an address is inside a ServiceCIDR.
//
//   network  first                 offsetAddress                              last   (broadcast)
//      │       │◂── static band ──▸│◂──────────── dynamic band ─────────────▸│       │
//   The bands are upstream's (KEP-3070, calculateRangeOffset): allocateNext takes from the dynamic
//   band first; addresses asked for by name should come from the static band.
import { isCanonical, parseAddrInto, type Family } from '../adapters/address.ts';
import { InvalidArgumentError, InvalidCIDRError } from '../adapters/errors.ts';
import { Prefix } from '../adapters/geometry.ts';
import type { ServiceCIDRRecord } from '../adapters/kubernetes/service-cidrs.ts';
import { rangeSkipReason } from '../adapters/meta-allocator.ts';
import { readServiceCIDR } from '../adapters/service-cidrs.ts';
import { OK } from '../adapters/wasm.ts';

/** A parsed address: its family and words (as adapters/address.ts writes them). */
export interface Addr {
  readonly version: Family;
  readonly words: Uint32Array;
}

/** Parses address text; undefined when it is not an address (an IPAddress name should always be). */
export function parseAddress(text: string): Addr | undefined {
  const words = new Uint32Array(4);
  try {
    return { version: parseAddrInto(text, words), words };
  } catch {
    return undefined;
  }
}

/**
 * The address an IPAddress of this name allocates: the name parsed, when it is an address in
 * canonical text, as kube-apiserver's validation requires of an IPAddress's name (the check of
 * adapters/records.ts isCanonicalAddress, the store's own: address.ts isCanonical on the words
 * parsed, which no IPv4-mapped text passes); undefined for any other name (`10.96.0.011`,
 * `::ffff:10.96.0.9`, `FD00:10:96::5`, `not-an-ip`), which allocates nothing: `check` finds no
 * Service holding such an object (a ClusterIP's IPAddress is named canonically), and `status` and
 * `map` count it in no range. The name is parsed once.
 */
export function allocatedAddress(name: string): Addr | undefined {
  const words = new Uint32Array(4);
  const version = allocatedAddressInto(name, words);
  return version === 0 ? undefined : { version, words };
}

/** allocatedAddress into `words`, allocating nothing: the family, or 0 (`words` then holds no address) when the name allocates nothing. */
export function allocatedAddressInto(name: string, words: Uint32Array): Family | 0 {
  let version: Family;
  try {
    version = parseAddrInto(name, words);
  } catch {
    return 0;
  }
  return isCanonical(name, version, words) ? version : 0;
}

/**
 * Parses a Service's ClusterIP as kube-apiserver's repair loop does (netutils.ParseIPSloppy): a
 * dotted quad may carry leading zeros, read as decimal (`10.96.0.010` is 10.96.0.10), as Services
 * created before Kubernetes 1.20 may hold; anything else as parseAddress.
 */
export function parseClusterIP(text: string): Addr | undefined {
  // the strict reading first: a quad it accepts has no leading zero, so it reads the same; the
  // sloppy one only for the rest, which nearly no ClusterIP is
  const addr = parseAddress(text);
  if (addr !== undefined) return addr;
  const quad = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (quad === null) return undefined;
  const octets = quad.slice(1).map(Number);
  return octets.every((o) => o <= 255) ? parseAddress(octets.join('.')) : undefined;
}

/** Where an address sits in a range: outside it, or in one of its bands. */
export type Placement = 'outside' | 'static' | 'dynamic';

const scratch = new Uint32Array(2);

/**
 * The band of `addr` in `prefix`: 'static' for offsets below the range offset, 'dynamic' above,
 * 'outside' when the address is not in [first, last] (network, IPv4 broadcast, another family).
 */
export function placement(prefix: Prefix, addr: Addr): Placement {
  if (prefix.offsetOf(addr.version, addr.words, scratch) !== OK) return 'outside';
  return scratch[0] === 0 && scratch[1]! < prefix.rangeOffset ? 'static' : 'dynamic';
}

/** The offset of `addr` from the range's first address as (hi, lo), or undefined when outside. */
export function offsetIn(prefix: Prefix, addr: Addr): [number, number] | undefined {
  if (prefix.offsetOf(addr.version, addr.words, scratch) !== OK) return undefined;
  return [scratch[0]!, scratch[1]!];
}

/** One entry of a ServiceCIDR's spec.cidrs, and whether this package's MetaAllocator serves it. */
export interface ServiceRange {
  /** The ServiceCIDR's name. */
  readonly serviceCIDR: string;
  /** As written in spec.cidrs. */
  readonly cidr: string;
  /** The prefix; undefined when the text is no CIDR (the API server should not have accepted it). */
  readonly prefix: Prefix | undefined;
  /**
   * `not allocatable: ` and the reason when a MetaAllocator skips the range: text that is no CIDR
   * (as the MetaAllocator parses it), or a range no allocator here serves (rangeSkipReason, as
   * skipReason says it: an IPv6 prefix shorter than /64, 255.255.255.255/32 and the all-ones
   * /128, an IPv6 prefix overlapping ::ffff:0:0/96). Undefined when the range is served.
   */
  readonly refusal: string | undefined;
}

/**
 * The ranges of a ServiceCIDR, in spec.cidrs order, each with its prefix and refusal. A
 * ServiceCIDR that a MetaAllocator refuses whole (readServiceCIDR: more CIDRs than it reads) has
 * every range refused with that reason: none of them is served.
 */
export function rangesOf(sc: ServiceCIDRRecord): ServiceRange[] {
  let refusedWhole: string | undefined;
  try {
    readServiceCIDR({ name: sc.name, cidrs: sc.cidrs });
  } catch (e) {
    if (!(e instanceof InvalidArgumentError)) throw e;
    refusedWhole = `not allocatable: ${e.message}`;
  }
  return sc.cidrs.map((cidr) => {
    let prefix: Prefix;
    try {
      prefix = Prefix.parse(cidr);
    } catch (e) {
      if (!(e instanceof InvalidCIDRError)) throw e;
      return { serviceCIDR: sc.name, cidr, prefix: undefined, refusal: `not allocatable: ${e.message}` };
    }
    if (refusedWhole !== undefined) return { serviceCIDR: sc.name, cidr, prefix, refusal: refusedWhole };
    const skipped = skipReason(prefix);
    return { serviceCIDR: sc.name, cidr, prefix, refusal: skipped === undefined ? undefined : `not allocatable: ${skipped}` };
  });
}

/**
 * Why a MetaAllocator skips the range of `prefix` (rangeSkipReason), as the command line says it;
 * undefined when it serves it. The error's `reason`: the library's words, without upstream's bare
 * `invalid address []` in front of them for a prefix without a first address (255.255.255.255/32,
 * the all-ones /128), which tells an operator nothing: the range and what is wrong with it alone
 * (`255.255.255.255/32 has no usable address: …; use a shorter prefix`).
 */
export function skipReason(prefix: Prefix): string | undefined {
  return rangeSkipReason(prefix)?.reason;
}

/**
 * Whether the range's [first, last] holds `addr`, served or not: kube-apiserver's repair loop
 * (PrefixContainsIP) takes an address there as inside the ServiceCIDR, whatever allocates from
 * the range. The network and IPv4 broadcast addresses are in no range.
 */
export function holds(range: ServiceRange, addr: Addr): boolean {
  return range.prefix?.inRange(addr.version, addr.words) === true;
}

/** The `ip` of a listed item, what sortByAddress sorts the lists of `status` and `check` by. */
export const byIP = (item: { readonly ip: string }): string => item.ip;

/** An item with its address as a sort key: family (0 for text that is no address) and the four words. */
interface AddressKey<T> {
  readonly item: T;
  readonly text: string;
  readonly family: number;
  readonly w0: number;
  readonly w1: number;
  readonly w2: number;
  readonly w3: number;
}

/**
 * Sorts `items` in place by the address text `ipOf` gives each: numerically, IPv4 before IPv6;
 * text that is no address after them, by text. Each text is parsed once, into a key, not once per
 * comparison: a sort of n items compares n·log n times (10^5 findings were millions of parses,
 * seconds of a run). Stable. Returns `items`.
 */
export function sortByAddress<T>(items: T[], ipOf: (item: T) => string): T[] {
  const words = new Uint32Array(4);
  const keys = items.map((item): AddressKey<T> => {
    const text = ipOf(item);
    let family = 0;
    try {
      family = parseAddrInto(text, words);
    } catch {
      words.fill(0); // no address: sorted last, by text
    }
    return { item, text, family, w0: words[0]!, w1: words[1]!, w2: words[2]!, w3: words[3]! };
  });
  keys.sort(
    (x, y) =>
      (x.family === 0 ? 7 : x.family) - (y.family === 0 ? 7 : y.family) ||
      x.w0 - y.w0 ||
      x.w1 - y.w1 ||
      x.w2 - y.w2 ||
      x.w3 - y.w3 ||
      (x.family !== 0 ? 0 : x.text < y.text ? -1 : x.text > y.text ? 1 : 0),
  );
  for (let i = 0; i < keys.length; i++) items[i] = keys[i]!.item;
  return items;
}
