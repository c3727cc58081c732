// IPv6 text both ways (adapters/address.ts) against oracles that share no code with it:
//
//   - acceptance: Node's `net.isIPv6` / `net.isIPv4` (regular expressions of the full grammar),
//     minus zones, which we reject on purpose;
//   - value: a BigInt built by rewriting the text (`::` expanded, a dotted quad turned into two
//     groups, every group padded to four digits);
//   - canonical text: RFC 5952 section 4 by the book over the eight groups, and ipaddr.js's
//     toRFC5952String.
//
// Inputs come from a seeded generator, so a failure names an input that fails again: every
// shape of zero run (all 256 masks of zero groups) in every accepted spelling (each group padded
// or not, upper or lower case, each possible `::`, with and without an embedded dotted quad),
// then one to three random edits of those spellings, which land on both sides of the grammar.
import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { canonicalAddr, canonicalOf, formatAddr, formatIPv6, isCanonical, parseAddrInto, type Family } from '../adapters/address.ts';
import { InvalidAddressError } from '../adapters/errors.ts';
import { seededRandom, type RandomSource } from '../adapters/random.ts';

// ---------------------------------------------------------------------------------------------
// Oracles.

/** Whether Go's netip.ParseAddr (as narrowed by address.ts: no zones) accepts `s`. */
function oracleAccepts(s: string): boolean {
  if (s.includes(':')) return isIPv6(s) && !s.includes('%');
  return isIPv4(s);
}

/** The value of text oracleAccepts, as a BigInt (IPv4 text: the 32-bit value). */
function oracleValue(s: string): bigint {
  if (!s.includes(':')) return s.split('.').reduce((v, octet) => (v << 8n) | BigInt(octet), 0n);
  let t = s;
  if (t.includes('.')) {
    const cut = t.lastIndexOf(':') + 1;
    const q = t.slice(cut).split('.').map(Number);
    t = `${t.slice(0, cut)}${((q[0]! << 8) | q[1]!).toString(16)}:${((q[2]! << 8) | q[3]!).toString(16)}`;
  }
  let fields: string[];
  if (t.includes('::')) {
    const [head, tail] = t.split('::') as [string, string];
    const h = head === '' ? [] : head.split(':');
    const tl = tail === '' ? [] : tail.split(':');
    fields = [...h, ...new Array<string>(8 - h.length - tl.length).fill('0'), ...tl];
  } else {
    fields = t.split(':');
  }
  return BigInt(`0x${fields.map((f) => f.padStart(4, '0')).join('')}`);
}

/** RFC 5952 section 4 by the book: lowercase, no leading zeros, the first longest run of ≥ 2 zero groups as `::`. */
function oracleFormat6(v: bigint): string {
  const g: number[] = [];
  for (let i = 7; i >= 0; i--) g.push(Number((v >> BigInt(16 * i)) & 0xffffn));
  const hex = g.map((x) => x.toString(16));
  let at = -1;
  let len = 1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > len) {
      at = i;
      len = j - i;
    }
  }
  if (at < 0) return hex.join(':');
  return `${hex.slice(0, at).join(':')}::${hex.slice(at + len).join(':')}`;
}

const MAPPED_HIGH = 0xffffn; // bits 127..32 of ::ffff:a.b.c.d

/** What parseAddrInto must return for accepted text: family, words, and the canonical text. */
function oracle(s: string): { family: Family; words: number[]; canonical: string } {
  const v = oracleValue(s);
  if (!s.includes(':') || v >> 32n === MAPPED_HIGH) {
    const v4 = Number(v & 0xffffffffn);
    return { family: 4, words: [0, 0, 0, v4], canonical: `${v4 >>> 24}.${(v4 >>> 16) & 255}.${(v4 >>> 8) & 255}.${v4 & 255}` };
  }
  const words = [3, 2, 1, 0].map((i) => Number((v >> BigInt(32 * i)) & 0xffffffffn));
  return { family: 6, words, canonical: oracleFormat6(v) };
}

// ---------------------------------------------------------------------------------------------
// Generators.

const below = (rng: RandomSource, n: number): number => rng.nextU32() % n;

/** A nonzero group with 1..4 hex digits, each digit count equally likely. */
function nonzeroGroup(rng: RandomSource): number {
  const digits = 1 + below(rng, 4);
  const lo = digits === 1 ? 1 : 16 ** (digits - 1);
  return lo + below(rng, 16 ** digits - lo);
}

/** Eight groups: zero where bit i of `mask` is set (group 0 = bits 127..112), else nonzero. */
function groupsOf(mask: number, rng: RandomSource): number[] {
  const g: number[] = [];
  for (let i = 0; i < 8; i++) g.push((mask >>> i) & 1 ? 0 : nonzeroGroup(rng));
  return g;
}

const wordsOfGroups = (g: readonly number[]): number[] => [0, 2, 4, 6].map((i) => ((g[i]! << 16) | g[i + 1]!) >>> 0);
const bigOfGroups = (g: readonly number[]): bigint => g.reduce((v, x) => (v << 16n) | BigInt(x), 0n);
const bigOfWords = (w: readonly number[]): bigint => w.reduce((v, x) => (v << 32n) | BigInt(x), 0n);

/** One group as text: leading zeros to 1..4 digits or none, upper or lower case. */
function spellGroup(x: number, rng: RandomSource): string {
  let t = x.toString(16);
  if (below(rng, 3) === 0) t = t.padStart(t.length + below(rng, 5 - t.length), '0');
  return below(rng, 4) === 0 ? t.toUpperCase() : t;
}

/**
 * Accepted spellings of the address with groups g: every `::` over a run of zero groups [a, b)
 * (including none), each with the last two groups plain or as a dotted quad (when the `::` does
 * not cover them).
 */
function spellings(g: readonly number[], rng: RandomSource): string[] {
  const out: string[] = [];
  const cuts: [number, number][] = [[0, 0]];
  for (let a = 0; a < 8; a++) for (let b = a + 1; b <= 8 && g[b - 1] === 0; b++) cuts.push([a, b]);
  for (const [a, b] of cuts) {
    for (const dotted of [false, true]) {
      if (dotted && b > 6) continue;
      const field = (i: number): string => spellGroup(g[i]!, rng);
      const quad = `${g[6]! >>> 8}.${g[6]! & 255}.${g[7]! >>> 8}.${g[7]! & 255}`;
      const part = (from: number, to: number): string[] => {
        const f: string[] = [];
        for (let i = from; i < to; i++) {
          if (dotted && i === 6) {
            f.push(quad);
            break;
          }
          f.push(field(i));
        }
        return f;
      };
      out.push(a === b ? part(0, 8).join(':') : `${part(0, a).join(':')}::${part(b, 8).join(':')}`);
    }
  }
  return out;
}

/** Characters for random edits: the grammar's own, and look-alikes outside ASCII. */
const EDIT_CHARS = [
  ...'0123456789abcdefABCDEFgxG:.%/ ',
  ':',
  ':',
  '.',
  '\u0661', // ARABIC-INDIC DIGIT ONE
  '\uff11', // FULLWIDTH DIGIT ONE
  '\u0131', // dotless i: 0x131 & 0xff is '1'
  '\u0141', // 0x141 & 0xff is 'A'
  '\u013a', // 0x13a & 0xff is ':'
  '\u012e', // 0x12e & 0xff is '.'
];

/** One to three random edits (insert, delete, replace, duplicate a slice) of `s`. */
function mutate(s: string, rng: RandomSource): string {
  let t = s;
  for (let k = 1 + below(rng, 3); k > 0; k--) {
    const at = below(rng, t.length + 1);
    const ch = EDIT_CHARS[below(rng, EDIT_CHARS.length)]!;
    switch (below(rng, 4)) {
      case 0:
        t = t.slice(0, at) + ch + t.slice(at);
        break;
      case 1:
        t = t.slice(0, at) + t.slice(at + 1);
        break;
      case 2:
        t = t.slice(0, at) + ch + t.slice(at + 1);
        break;
      default:
        t = t.slice(0, at) + t.slice(at, at + 1 + below(rng, 5)) + t.slice(at);
    }
  }
  return t;
}

/** Hand-picked inputs at the edges of the grammar. */
const EDGES = [
  '::',
  '::0',
  '0::',
  '::1',
  '1::',
  ':::',
  '::::',
  '1:::2',
  ':::1',
  '1:::',
  '::1:::',
  '1::2::3',
  ':',
  ':1',
  '1:',
  ':1::2',
  '1::2:',
  ':1:2:3:4:5:6:7:8',
  '1:2:3:4:5:6:7:8:',
  '1:2:3:4:5:6:7',
  '1:2:3:4:5:6:7:8',
  '1:2:3:4:5:6:7:8:9',
  '1:2:3:4:5:6:7::',
  '::2:3:4:5:6:7:8',
  '1:2:3:4:5:6:7:8::',
  '::1:2:3:4:5:6:7:8',
  '1:2:3:4::5:6:7:8',
  '1:2:3::4:5:6:7',
  '0:0:0:0:0:0:0:0',
  '0:0:0:0:0:0:0:1',
  '1:0:0:1:0:0:1:1',
  '1:0:0:0:1:0:0:0',
  '0:0:1:0:0:1:0:0',
  '1:0:1:0:1:0:1:0',
  '00001::',
  '::00001',
  '1:2:3:4:5:6:7:00008',
  '0000:0000:0000:0000:0000:0000:0000:0000',
  'FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF',
  'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255',
  'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.2555',
  '::1.2.3.4',
  '::ffff:1.2.3.4',
  '::FFFF:1.2.3.4',
  '::ffff:102:304',
  '0:0:0:0:0:ffff:1.2.3.4',
  '::fffe:1.2.3.4',
  '1::ffff:1.2.3.4',
  '::1.2.3',
  '::1.2.3.4.5',
  '::1.2.3.04',
  '::01.2.3.4',
  '::256.1.1.1',
  '::1.2.3.4:1',
  '::1.2.3.4::',
  '1.2.3.4::',
  '1:2:3:4:5:6:7:1.2.3.4',
  '1:2:3:4:5:1.2.3.4',
  '1:2:3:4:5:6:1.2.3.4',
  '1:2:3:4:5::1.2.3.4',
  '1:2:3:4:5:6::1.2.3.4',
  '::1.2.3.4%eth0',
  'fe80::1%eth0',
  'fe80::1%',
  '%eth0',
  '[::1]',
  ' ::1',
  '::1 ',
  '::g',
  '::-1',
  '::+1',
  '0x1::',
  '',
  '1.2.3.4',
  '01.2.3.4',
  '1.2.3.4:',
  `${'1:'.repeat(22)}1`,
];

// ---------------------------------------------------------------------------------------------
// The check every input goes through.

const SENTINEL = [0xdeadbeef, 0xfeedface, 0xcafef00d, 0x8badf00d];

/** Parses `s` both ways (ours and the oracle's) and compares everything observable. */
function check(s: string): 'accepted' | 'rejected' {
  const out = Uint32Array.from(SENTINEL);
  let family: Family | undefined;
  let error: unknown;
  try {
    family = parseAddrInto(s, out);
  } catch (e) {
    error = e;
  }
  const accepts = oracleAccepts(s);
  if (!accepts) {
    expect(error, JSON.stringify(s)).toBeInstanceOf(InvalidAddressError);
    expect([...out], `out untouched by ${JSON.stringify(s)}`).toEqual(SENTINEL);
    return 'rejected';
  }
  expect(error, JSON.stringify(s)).toBeUndefined();
  const want = oracle(s);
  expect({ text: s, family, words: [...out] }).toEqual({ text: s, family: want.family, words: want.words });
  // right after the parse, before anything formats: what the parser learned about the text
  expect(isCanonical(s, family!, out), `isCanonical(${JSON.stringify(s)}) after the parse`).toBe(s === want.canonical);
  expect(formatAddr(family!, out)).toBe(want.canonical);
  expect(canonicalAddr(s)).toBe(want.canonical);
  expect(isCanonical(s, family!, out), `isCanonical(${JSON.stringify(s)})`).toBe(s === want.canonical);
  expect(canonicalOf(s, family!, out)).toBe(want.canonical);
  return 'accepted';
}

// ---------------------------------------------------------------------------------------------

describe('IPv6 text against independent oracles', () => {
  it('the oracles agree with each other and with documented answers', () => {
    expect(oracleAccepts('fe80::1%eth0')).toBe(false);
    expect(oracleAccepts('1:2:3:4:5:6:7::')).toBe(true);
    expect(oracleAccepts('1::2:3:4:5:6:7:8')).toBe(false);
    expect(oracle('::ffff:1.2.3.4')).toEqual({ family: 4, words: [0, 0, 0, 0x01020304], canonical: '1.2.3.4' });
    expect(oracle('2001:DB8:0:0:1:0:0:1')).toEqual({ family: 6, words: [0x20010db8, 0, 0x10000, 1], canonical: '2001:db8::1:0:0:1' });
    expect(oracle('::1.2.3.4').canonical).toBe('::102:304');
    expect(oracleFormat6(0n)).toBe('::');
    expect(oracleFormat6(1n << 112n)).toBe('1::');
    expect(oracleFormat6(0x0001_0000_0001_0000_0001_0000_0001_0000n)).toBe('1:0:1:0:1:0:1:0');
  });

  it('formatIPv6 writes RFC 5952 text for every shape of zero run, as both oracles do', () => {
    const rng = seededRandom(5952);
    for (let mask = 0; mask < 256; mask++) {
      for (let k = 0; k < 8; k++) {
        const g = groupsOf(mask, rng);
        const w = wordsOfGroups(g);
        const text = formatIPv6(w[0]!, w[1]!, w[2]!, w[3]!);
        const v = bigOfGroups(g);
        expect({ mask, text }).toEqual({ mask, text: oracleFormat6(v) });
        expect(text).toBe(new ipaddr.IPv6(g).toRFC5952String());
        expect(isIPv6(text)).toBe(true);
        expect(text.length).toBeLessThanOrEqual(39);
      }
    }
  });

  it('formatIPv6 of uniformly random words and of every single-group value', () => {
    const rng = seededRandom(128);
    for (let k = 0; k < 20000; k++) {
      const w = [rng.nextU32(), rng.nextU32(), rng.nextU32(), rng.nextU32()];
      expect(formatIPv6(w[0]!, w[1]!, w[2]!, w[3]!)).toBe(oracleFormat6(bigOfWords(w)));
    }
    // every 16-bit value as a group between others, and as the first and the last group
    for (let x = 0; x < 0x10000; x++) {
      for (const w of [
        [0x20010db8, x, 0xffff0001, ((x << 16) | 0x100) >>> 0],
        [(x << 16) >>> 0, 0, 0, x],
      ]) {
        expect(formatIPv6(w[0]!, w[1]!, w[2]!, w[3]!)).toBe(oracleFormat6(bigOfWords(w)));
      }
    }
  });

  it('parses every accepted spelling of every zero-run shape to the same words and canonical text', () => {
    const rng = seededRandom(4291);
    let accepted = 0;
    let noncanonical = 0;
    for (let mask = 0; mask < 256; mask++) {
      for (let k = 0; k < 3; k++) {
        for (const s of spellings(groupsOf(mask, rng), rng)) {
          expect(oracleAccepts(s), `oracle rejects the spelling ${JSON.stringify(s)}`).toBe(true);
          expect(check(s)).toBe('accepted');
          accepted++;
          if (canonicalAddr(s) !== s) noncanonical++;
        }
      }
    }
    // the generator reaches both kinds of text, in numbers
    expect(accepted).toBeGreaterThan(8000);
    expect(noncanonical).toBeGreaterThan(accepted / 2);
  });

  it('accepts and rejects exactly what the oracle does after random edits, with the same words', () => {
    const rng = seededRandom(0x1dea);
    const tally = { accepted: 0, rejected: 0 };
    for (let k = 0; k < 30000; k++) {
      const g = groupsOf(rng.nextU32() & 255, rng);
      const all = spellings(g, rng);
      tally[check(mutate(all[below(rng, all.length)]!, rng))]++;
    }
    expect(tally.accepted).toBeGreaterThan(3000);
    expect(tally.rejected).toBeGreaterThan(3000);
  });

  it('agrees with the oracle on the edges of the grammar', () => {
    const tally = { accepted: 0, rejected: 0 };
    for (const s of EDGES) tally[check(s)]++;
    expect(tally.accepted).toBeGreaterThan(20);
    expect(tally.rejected).toBeGreaterThan(40);
  });
});
