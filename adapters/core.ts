// The entry point `ipallocator/core`: the low-level pieces under the allocators, for tools that
// work with ClusterIP ranges without allocating (validators, the command line, tests).
//
//   import { canonicalAddr, hostsPerNetwork, calculateRangeOffset } from 'ipallocator/core';
//   canonicalAddr('2001:DB8:0:0:0::1');   // '2001:db8::1' — the IPAddress object name
//   hostsPerNetwork('10.96.0.0/12');      // 1048574n
//   calculateRangeOffset('10.96.0.0/12'); // 256: the static band (KEP-3070)
//
// - Address text: strict parsing (Go net/netip rules: no octal, hex or short IPv4 forms, no
//   zones) and canonical output (dotted decimal; RFC 5952 for IPv6).
// - Range geometry: upstream's helpers of pkg/registry/core/service/ipallocator/ipallocator.go
//   (hostsPerNetwork, broadcastAddress, addOffsetAddress, calculateRangeOffset, ipIterator) with
//   their upstream answers, and cidrallocator.go's isNotContained.
// - Random sources: seededRandom (reproducible draws), defaultRandom and the generator behind
//   them, Xoshiro128, for the `random` option or a source of your own (RandomSource).

// ── address text ──────────────────────────────────────────────────────────────────────────
// formatAddr, formatPrefix and parseAddrInto are the checked variants: the package's own callers
// format and parse into words they made with the unchecked ones (address.ts), on the allocation
// path.
export {
  canonicalAddr,
  formatAddrChecked as formatAddr,
  formatPrefixChecked as formatPrefix,
  parseAddr,
  parseAddrIntoChecked as parseAddrInto,
  parsePrefix,
  type Family,
} from './address.ts';

// ── range geometry (upstream helpers) ─────────────────────────────────────────────────────
export { addOffsetAddress, broadcastAddress, calculateRangeOffset, hostsPerNetwork, ipIterator, isNotContained } from './geometry.ts';

// ── random sources ────────────────────────────────────────────────────────────────────────
export { type RandomSource, Xoshiro128, defaultRandom, seededRandom } from './random.ts';
