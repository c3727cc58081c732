// The ranges the suite measures and the arithmetic the harness needs around them: offsets
// (0 = network + 1, as in adapters/free-index.ts) to canonical text, written here so the bench can
// load stores before (and independently of) adapters/address.ts. Untimed code: clarity over speed.
import { calculateRangeOffset } from './legacy-bitmap.ts';

export type Family = 'IPv4' | 'IPv6';

export interface RangeSpec {
  /** Short id used in case names, e.g. "v4/16". */
  readonly id: string;
  readonly family: Family;
  readonly cidr: string;
  /** "/16" */
  readonly prefix: string;
  readonly prefixBits: number;
  /** The network address as four u32 words (w0 = bits 127..96; IPv4 uses w3). */
  readonly network: readonly [number, number, number, number];
  /** Usable addresses (upstream hostsPerNetwork) as (hi, lo); exact number when below 2^53. */
  readonly sizeHi: number;
  readonly sizeLo: number;
  /** Usable addresses as a number (2^64 − 1 rounds for a /64: use sizeHi/sizeLo there). */
  readonly size: number;
  /** First offset of the dynamic band (KEP-3070). */
  readonly rangeOffset: number;
  /** True when the fills are given as percentages (a range small enough to fill). */
  readonly fillable: boolean;
}

function v4(cidr: string): RangeSpec {
  const [ip, bits] = cidr.split('/');
  const p = Number(bits);
  const h = 32 - p;
  const o = ip.split('.').map(Number);
  const w3 = ((o[0] << 24) | (o[1] << 16) | (o[2] << 8) | o[3]) >>> 0;
  const size = 2 ** h - 2;
  return {
    id: `v4/${p}`,
    family: 'IPv4',
    cidr,
    prefix: `/${p}`,
    prefixBits: p,
    network: [0, 0, 0, w3],
    sizeHi: 0,
    sizeLo: size,
    size,
    rangeOffset: calculateRangeOffset(h),
    fillable: true,
  };
}

function v6(cidr: string): RangeSpec {
  const [ip, bits] = cidr.split('/');
  const p = Number(bits);
  const h = 128 - p;
  const words = parseV6Words(ip);
  const sizeHi = h >= 64 ? 0xffffffff : h > 32 ? 2 ** (h - 32) - 1 : 0;
  const sizeLo = h >= 32 ? 0xffffffff : 2 ** h - 1;
  return {
    id: `v6/${p}`,
    family: 'IPv6',
    cidr,
    prefix: `/${p}`,
    prefixBits: p,
    network: words,
    sizeHi,
    sizeLo,
    size: sizeHi * 4294967296 + sizeLo,
    rangeOffset: calculateRangeOffset(h),
    fillable: h <= 24,
  };
}

/** Parses the simple IPv6 forms used here ("2001:db8::", "fd00::1"). */
function parseV6Words(text: string): [number, number, number, number] {
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const a = head ? head.split(':') : [];
  const b = tail ? tail.split(':') : [];
  const groups = [...a, ...Array(8 - a.length - b.length).fill('0'), ...b].map((g) => parseInt(g, 16));
  return [0, 1, 2, 3].map((i) => ((groups[2 * i] << 16) | groups[2 * i + 1]) >>> 0) as [number, number, number, number];
}

export const RANGES: readonly RangeSpec[] = [
  v4('10.0.0.0/24'),
  v4('10.0.0.0/16'),
  v4('10.96.0.0/12'),
  v6('2001:db8::/112'),
  v6('2001:db8::/64'),
];

export function rangeById(id: string): RangeSpec {
  const r = RANGES.find((x) => x.id === id);
  if (!r) throw new Error(`no range ${id}`);
  return r;
}

/** The address at offset (hi, lo) as four u32 words: network + 1 + offset. */
export function offsetWords(r: RangeSpec, hi: number, lo: number): [number, number, number, number] {
  const w = [...r.network];
  // add (hi, lo) + 1 into words 2..3 with carries (offsets are < 2^64 − 1, host bits ≥ the offset's)
  let t = w[3] + lo + 1;
  w[3] = t >>> 0;
  let carry = t > 0xffffffff ? 1 : 0;
  t = w[2] + hi + carry;
  w[2] = t >>> 0;
  carry = t > 0xffffffff ? 1 : 0;
  t = w[1] + carry;
  w[1] = t >>> 0;
  carry = t > 0xffffffff ? 1 : 0;
  w[0] = (w[0] + carry) >>> 0;
  return w as [number, number, number, number];
}

/** Canonical text (dotted quad; RFC 5952 for IPv6). */
export function formatWords(family: Family, w: readonly number[]): string {
  if (family === 'IPv4') {
    const x = w[3];
    return `${x >>> 24}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`;
  }
  const g: number[] = [];
  for (let i = 0; i < 4; i++) g.push(w[i] >>> 16, w[i] & 0xffff);
  // longest run of ≥ 2 zero groups, leftmost on ties
  let bestAt = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      bestAt = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (xs: number[]): string => xs.map((x) => x.toString(16)).join(':');
  if (bestAt < 0) return hex(g);
  return `${hex(g.slice(0, bestAt))}::${hex(g.slice(bestAt + bestLen))}`;
}

export function offsetText(r: RangeSpec, hi: number, lo: number): string {
  return formatWords(r.family, offsetWords(r, hi, lo));
}
