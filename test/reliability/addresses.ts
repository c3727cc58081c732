// Address arithmetic for the reliability drivers, in BigInt on purpose (independent of the
// product's geometry code): range bounds from the reference's bigGeometry, and operation
// arguments (a u32 from the op list) turned into address text deterministically.
import { formatIPv4, formatIPv6, parseAddr } from '../../adapters/address.ts';
import { bigGeometry, type BigGeometry } from '../../adapters/reference-allocator.ts';

export type { BigGeometry };
export { bigGeometry };

/** Address text of the value v in the family of g (IPv4 dotted, IPv6 RFC 5952). */
export function formatValue(width: 32 | 128, v: bigint): string {
  if (width === 32) return formatIPv4(Number(v & 0xffffffffn));
  return formatIPv6(
    Number((v >> 96n) & 0xffffffffn),
    Number((v >> 64n) & 0xffffffffn),
    Number((v >> 32n) & 0xffffffffn),
    Number(v & 0xffffffffn),
  );
}

/** The value of address text (IPv4-mapped IPv6 parses as IPv4, as everywhere in the package). */
export function addressValue(ip: string): { width: 32 | 128; v: bigint } {
  const { family, words } = parseAddr(ip);
  if (family === 4) return { width: 32, v: BigInt(words[3]!) };
  return { width: 128, v: (BigInt(words[0]!) << 96n) | (BigInt(words[1]!) << 64n) | (BigInt(words[2]!) << 32n) | BigInt(words[3]!) };
}

/** True when ip is in [first, last] of g. */
export function inRange(g: BigGeometry, ip: string): boolean {
  const { width, v } = addressValue(ip);
  return width === g.width && v >= g.first && v <= g.last;
}

/** Offset of an in-range ip (value − first). */
export function offsetOf(g: BigGeometry, ip: string): bigint {
  return addressValue(ip).v - g.first;
}

/**
 * An address for operation argument `a` (a u32):
 *   a mod 8 = 0..2  anywhere in the range (offset (a >> 3) mod min(count, 2^29))
 *             3..4  the first 320 offsets (the static band and just above: collisions)
 *             5     an address held now (held[(a >> 3) mod n]), else the first
 *             6     an edge: network, broadcast, first, last, last + 1, network − 1
 *             7     outside: the other family, below/above the prefix, an IPv4-mapped spelling of
 *                   an in-range IPv4 address (accepted), or malformed text
 */
export function addressFor(g: BigGeometry, a: number, held: readonly string[]): string {
  const m = a & 7;
  const v = a >>> 3;
  const count = g.last >= g.first ? g.last - g.first + 1n : 0n;
  const top = (1n << BigInt(g.width)) - 1n;
  const at = (x: bigint) => formatValue(g.width, x < 0n ? 0n : x > top ? top : x);
  if (count === 0n) return at(g.first);
  if (m <= 2) {
    const window = count < 1n << 29n ? count : 1n << 29n;
    return at(g.first + (BigInt(v) % window));
  }
  if (m <= 4) return at(g.first + (BigInt(v) % (count < 320n ? count : 320n)));
  if (m === 5) return held.length > 0 ? held[v % held.length]! : at(g.first);
  if (m === 6) {
    const edges = [g.network, g.broadcast, g.first, g.last, g.last + 1n, g.network - 1n];
    return at(edges[v % edges.length]!);
  }
  switch (v % 5) {
    case 0:
      return g.width === 32 ? formatValue(128, (0x20010db8n << 96n) | BigInt(v)) : formatValue(32, 0x0a000000n + BigInt(v & 0xffff));
    case 1:
      return g.network === 0n ? at(g.broadcast + 1n) : at(g.network - 1n - BigInt(v % 1000));
    case 2:
      return g.broadcast === top ? at(g.network - 1n) : at(g.broadcast + 1n + BigInt(v % 1000));
    case 3:
      return g.width === 32 ? `::ffff:${at(g.first + (BigInt(v) % count))}` : at(g.first).toUpperCase();
    default:
      return `${at(g.first + (BigInt(v) % count))}${v % 2 === 0 ? ' ' : '%eth0'}`;
  }
}
