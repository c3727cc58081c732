// Tests of adapters/address.ts: named rejection and acceptance tables, RFC 5952 formatting cases,
// and property tests against a slow, obviously-correct parser written here (the oracle, in the
// spirit of Go's net/netip slow_test.go) and against ipaddr.js.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import {
  canonicalAddr,
  canonicalOf,
  isCanonical,
  isKnownCanonical,
  formatAddr,
  parseIPv4Fast,
  formatIPv4,
  formatIPv6,
  parseAddr,
  parseAddrInto,
  parsePrefix,
  type Family,
} from '../adapters/address.ts';
// what users of ipallocator/core call: the checked formatters (the package's own callers use
// address.ts's formatAddr, which trusts its words)
import { formatAddr as checkedFormatAddr, formatPrefix, parseAddrInto as checkedParseAddrInto } from '../adapters/core.ts';
import { InvalidAddressError, InvalidArgumentError, InvalidCIDRError } from '../adapters/errors.ts';
import { quoteInput } from '../adapters/quote.ts';

// ---------------------------------------------------------------------------------------------
// The oracle: a slow parser built from regular expressions and split(), following the grammar
// directly. Returns null for anything ParseAddr (minus zones, minus > 4 hex digits) rejects.

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])';
const V4_RE = new RegExp(`^${OCTET}\\.${OCTET}\\.${OCTET}\\.${OCTET}$`);
const GROUP_RE = /^[0-9a-fA-F]{1,4}$/;

function slowV4(s: string): number | null {
  if (!V4_RE.test(s)) return null;
  return s.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
}

function slowParse(s: string): { family: Family; words: number[] } | null {
  if (s.length === 0 || s.length > 45) return null;
  const v4 = slowV4(s);
  if (v4 !== null) return { family: 4, words: [0, 0, 0, v4] };
  if (!/^[0-9a-fA-F:.]+$/.test(s) || !s.includes(':')) return null;
  let body = s;
  let tail: number[] = [];
  if (s.includes('.')) {
    const cut = s.lastIndexOf(':');
    const embedded = slowV4(s.slice(cut + 1));
    if (embedded === null) return null;
    tail = [Math.floor(embedded / 65536), embedded % 65536];
    body = `${s.slice(0, cut + 1)}X`; // X stands for the two groups of the embedded address
  }
  const split = (part: string): number[] | null => {
    if (part === '') return [];
    const fields = part.split(':');
    if (!fields.every((f) => f === 'X' || GROUP_RE.test(f))) return null;
    return fields.flatMap((f) => (f === 'X' ? tail : [parseInt(f, 16)]));
  };
  const halves = body.split('::');
  let groups: number[];
  if (halves.length > 2) return null;
  if (halves.length === 2) {
    const head = split(halves[0]!);
    const rest = split(halves[1]!);
    if (head === null || rest === null || head.length + rest.length > 7) return null;
    groups = [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest];
  } else {
    const all = split(body);
    if (all === null || all.length !== 8) return null;
    groups = all;
  }
  const words = [0, 1, 2, 3].map((i) => groups[2 * i]! * 65536 + groups[2 * i + 1]!);
  if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff) return { family: 4, words: [0, 0, 0, words[3]!] };
  return { family: 6, words };
}

/** RFC 5952 by the book: expand to groups, pick the longest zero run (≥ 2, leftmost). */
function slowFormat6(words: ArrayLike<number>): string {
  const g: number[] = [];
  for (let i = 0; i < 4; i++) g.push(words[i]! >>> 16, words[i]! & 0xffff);
  let best = [-1, 0];
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i >= 2 && j - i > best[1]!) best = [i, j - i];
  }
  const hex = g.map((x) => x.toString(16));
  if (best[0]! < 0) return hex.join(':');
  return `${hex.slice(0, best[0]).join(':')}::${hex.slice(best[0]! + best[1]!).join(':')}`;
}

// ---------------------------------------------------------------------------------------------
// Rejection tables: [name, input, the reason (substring of the message)].

const BAD_ADDRS: [string, unknown, string][] = [
  // Not text at all.
  ['number', 16909060, 'expected a string, got number'],
  ['null', null, 'expected a string, got null'],
  ['undefined', undefined, 'expected a string, got undefined'],
  ['object', { ip: '1.2.3.4' }, 'expected a string, got object'],
  ['array', ['1.2.3.4'], 'expected a string, got array'],
  ['bigint', 1n, 'expected a string, got bigint'],
  ['boxed String', new String('1.2.3.4'), 'expected a string, got object'],
  ['empty', '', 'empty string'],
  ['over-long (46 characters)', 'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.2555', 'too long'],
  ['over-long, otherwise valid with a zone', 'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255%0', 'too long'],
  ['very long', '1'.repeat(10_000), 'too long'],
  // IPv4 forms Go rejects (ipaddr.js and inet_aton accept several).
  ['IPv4 leading zero', '010.1.1.1', 'IPv4 field has octet with leading zero'],
  ['IPv4 leading zero, last octet', '1.2.3.04', 'IPv4 field has octet with leading zero'],
  ['IPv4 double zero', '00.0.0.0', 'IPv4 field has octet with leading zero'],
  ['IPv4 hex octet', '0x7f.0.0.1', 'unexpected character'],
  ['IPv4 three parts', '1.1.1', 'IPv4 address too short'],
  ['IPv4 two parts', '127.1', 'IPv4 address too short'],
  ['IPv4 one decimal number', '1', 'unable to parse IP'],
  ['IPv4 as a 32-bit decimal', '2130706433', 'unable to parse IP'],
  ['IPv4 as hex number', '0x7f000001', 'unable to parse IP'],
  ['IPv4 five parts', '1.2.3.4.5', 'IPv4 address too long'],
  ['IPv4 octet 256', '1.2.3.256', 'IPv4 field has value >255'],
  ['IPv4 octet 999', '999.1.1.1', 'IPv4 field has value >255'],
  ['IPv4 octet 1000', '1.1000.1.1', 'IPv4 field has value >255'],
  ['IPv4 leading dot', '.1.2.3', 'IPv4 field must have at least one digit'],
  ['IPv4 trailing dot', '1.2.3.', 'IPv4 field must have at least one digit'],
  ['IPv4 trailing dot after four parts', '1.2.3.4.', 'IPv4 field must have at least one digit'],
  ['IPv4 empty field', '1..2.3', 'IPv4 field must have at least one digit'],
  ['IPv4 only dots', '...', 'IPv4 field must have at least one digit'],
  ['IPv4 negative', '-1.2.3.4', 'unexpected character'],
  ['IPv4 plus sign', '+1.2.3.4', 'unexpected character'],
  ['IPv4 with port', '1.2.3.4:80', 'unexpected character'],
  ['IPv4 with prefix', '10.0.0.0/8', 'unexpected character'],
  // Go: `%` after a dotted quad is just another character (zones are IPv6's)
  ['IPv4 with zone', '1.2.3.4%eth0', 'unexpected character (at "%eth0")'],
  ['IPv4-mapped with zone', '::ffff:1.2.3.4%eth0', 'IPv6 zones are not allowed (at "%eth0")'],
  ['IPv4 leading space', ' 1.2.3.4', 'unexpected character'],
  ['IPv4 trailing space', '1.2.3.4 ', 'unexpected character'],
  ['IPv4 trailing newline', '1.2.3.4\n', 'unexpected character'],
  ['IPv4 tab inside', '1.2.\t3.4', 'unexpected character'],
  ['IPv4 embedded NUL', '1.2.3.4\u0000', 'unexpected character'],
  ['IPv4 NUL inside', '1.2\u0000.3.4', 'unexpected character'],
  ['IPv4 fullwidth digit', '1.2.3.４', 'unexpected character'],
  ['IPv4 arabic-indic digit', '1.2.3.٤', 'unexpected character'],
  ['IPv4 letters', 'a.b.c.d', 'unexpected character'],
  ['hostname', 'localhost', 'unable to parse IP'],
  ['dotted hostname', 'example.com', 'unexpected character'],
  // IPv6.
  ['IPv6 brackets', '[::1]', 'unexpected character'],
  ['IPv6 brackets with port', '[::1]:80', 'unexpected character'],
  ['IPv6 zone', 'fe80::1%eth0', 'IPv6 zones are not allowed'],
  ['IPv6 numeric zone', 'fe80::1%1', 'IPv6 zones are not allowed'],
  ['IPv6 empty zone', 'fe80::1%', 'IPv6 zones are not allowed'],
  ['IPv6 zone after ::', '::%eth0', 'IPv6 zones are not allowed'],
  ['IPv6 zone after embedded IPv4', '::ffff:1.2.3.4%eth0', 'IPv6 zones are not allowed'],
  ['zone only', '%eth0', 'missing IPv6 address'],
  ['IPv6 group of 5 hex digits', '12345::1', 'IPv6 field has more than 4 hex digits'],
  ['IPv6 group of 5 zeros (Go accepts)', '00000::1', 'IPv6 field has more than 4 hex digits'],
  ['IPv6 group of 5 digits at the end', '1::00001', 'IPv6 field has more than 4 hex digits'],
  ['IPv6 two ::', '1::2::3', 'multiple :: in address'],
  ['IPv6 :::', '1:::2', 'each colon-separated field must have at least one digit'],
  ['IPv6 ::::', '::::', 'each colon-separated field must have at least one digit'],
  ['IPv6 nine groups', '1:2:3:4:5:6:7:8:9', 'trailing garbage after address'],
  ['IPv6 seven groups', '1:2:3:4:5:6:7', 'address string too short'],
  ['IPv6 eight groups and ::', '1:2:3:4:5:6:7:8::', 'the :: must expand to at least one field of zeros'],
  ['IPv6 :: and eight groups', '::1:2:3:4:5:6:7:8', 'the :: must expand to at least one field of zeros'],
  ['IPv6 :: and nine groups', '::1:2:3:4:5:6:7:8:9', 'trailing garbage after address'],
  ['IPv6 eight groups with :: inside', '1:2:3::4:5:6:7:8', 'the :: must expand to at least one field of zeros'],
  ['IPv6 leading single colon', ':1:2:3:4:5:6:7:8', 'each colon-separated field must have at least one digit'],
  ['IPv6 leading single colon before ::', ':1::', 'each colon-separated field must have at least one digit'],
  ['IPv6 trailing single colon', '1:2:3:4:5:6:7:8:', 'colon must be followed by more characters'],
  ['IPv6 trailing single colon after ::', '1::2:', 'colon must be followed by more characters'],
  ['IPv6 lone colon', ':', 'each colon-separated field must have at least one digit'],
  ['IPv6 non-hex letter', '1::g', 'unexpected character'],
  ['IPv6 non-hex letter inside a group', '1::1g', 'unexpected character, want colon'],
  ['IPv6 leading space', ' ::1', 'unexpected character'],
  ['IPv6 trailing space', '::1 ', 'unexpected character, want colon'],
  ['IPv6 space inside', '2001:db8:: 1', 'unexpected character'],
  ['IPv6 embedded NUL', '::1\u0000', 'unexpected character, want colon'],
  ['IPv6 dash', '2001-db8::1', 'unexpected character, want colon'],
  ['IPv6 with prefix', '2001:db8::/32', 'unexpected character'],
  ['embedded IPv4 not last (full form)', '1:2:3:4:5:6:1.2.3.4:8', 'invalid embedded IPv4 address: unexpected character'],
  ['embedded IPv4 in the middle (with ::)', '::1.2.3.4:1', 'invalid embedded IPv4 address: unexpected character'],
  ['embedded IPv4 too early', '1:2:3:4:5:1.2.3.4', 'embedded IPv4 address must replace the final 2 fields of the address'],
  ['embedded IPv4 after 7 groups', '1:2:3:4:5:6:7:1.2.3.4', 'embedded IPv4 address must replace the final 2 fields of the address'],
  ['embedded IPv4 with no room', '1:2:3:4:5:6:7::1.2.3.4', 'too many hex fields to fit an embedded IPv4'],
  ['embedded IPv4 leading zero', '::ffff:1.2.3.04', 'invalid embedded IPv4 address: IPv4 field has octet with leading zero'],
  ['embedded IPv4 >255', '::ffff:1.2.3.256', 'invalid embedded IPv4 address: IPv4 field has value >255'],
  ['embedded IPv4 three parts', '::ffff:1.2.3', 'invalid embedded IPv4 address: IPv4 address too short'],
  ['embedded IPv4 hex', '::ffff:0x1.2.3.4', 'unexpected character'],
  ['embedded IPv4 trailing dot', '::1.2.3.4.', 'invalid embedded IPv4 address: IPv4 field must have at least one digit'],
  ['embedded IPv4 first group > 4 digits', '::12345.1.1.1', 'IPv6 field has more than 4 hex digits'],
  ['colon after dotted quad start', '1.2:3::4', 'unexpected character'],
  ['IPv6 upper-case X', '0X1::', 'unexpected character, want colon'],
  ['IPv6 unicode colon', '2001\uff1adb8::1', 'unexpected character'],
];

const BAD_CIDRS: [string, unknown, string][] = [
  ['number', 8, 'expected a string, got number'],
  ['null', null, 'expected a string, got null'],
  ['undefined', undefined, 'expected a string, got undefined'],
  ['object', { cidr: '10.0.0.0/8' }, 'expected a string, got object'],
  ['empty', '', 'empty string'],
  ['no slash (IPv4)', '10.0.0.0', "no '/'"],
  ['no slash (IPv6)', '2001:db8::', "no '/'"],
  ['only a slash', '/', 'ParseAddr(""): empty string'],
  ['no address', '/8', 'ParseAddr(""): empty string'],
  ['empty length', '10.0.0.0/', 'bad bits after slash: ""'],
  ['leading zero in length', '10.0.0.0/08', 'bad bits after slash: "08"'],
  ['double zero length', '10.0.0.0/00', 'bad bits after slash: "00"'],
  ['plus sign', '10.0.0.0/+8', 'bad bits after slash: "+8"'],
  ['minus sign', '10.0.0.0/-8', 'bad bits after slash: "-8"'],
  ['space before length', '10.0.0.0/ 8', 'bad bits after slash: " 8"'],
  ['space after length', '10.0.0.0/8 ', 'bad bits after slash: "8 "'],
  ['space before slash', '10.0.0.0 /8', 'ParseAddr("10.0.0.0 "): unexpected character'],
  ['leading space', ' 10.0.0.0/8', 'unexpected character'],
  ['hex length', '10.0.0.0/0x8', 'bad bits after slash: "0x8"'],
  ['netmask instead of length', '10.0.0.0/255.0.0.0', 'bad bits after slash: "255.0.0.0"'],
  ['fractional length', '10.0.0.0/8.5', 'bad bits after slash: "8.5"'],
  ['IPv4 length 33', '10.0.0.0/33', 'prefix length out of range (0..32 for IPv4)'],
  ['IPv4 length 128', '10.0.0.0/128', 'prefix length out of range (0..32 for IPv4)'],
  ['IPv4 length 1000', '10.0.0.0/1000', 'prefix length out of range'],
  ['IPv6 length 129', '2001:db8::/129', 'prefix length out of range (0..128 for IPv6)'],
  ['two slashes', '10.0.0.0/8/8', 'ParseAddr("10.0.0.0/8"): unexpected character'],
  ['IPv4 leading zero in address', '010.0.0.0/8', 'ParseAddr("010.0.0.0"): IPv4 field has octet with leading zero'],
  ['IPv4 three parts', '10.0.0/8', 'ParseAddr("10.0.0"): IPv4 address too short'],
  ['bare number', '10/8', 'ParseAddr("10"): unable to parse IP'],
  ['IPv6 zone', 'fe80::1%eth0/64', 'IPv6 zones cannot be present in a prefix'],
  ['IPv4 with zone', '10.96.0.0%eth0/12', 'ParseAddr("10.96.0.0%eth0"): unexpected character (at "%eth0")'],
  ['IPv6 brackets', '[2001:db8::]/64', 'unexpected character'],
  ['IPv6 two ::', '2001::db8::/64', 'multiple :: in address'],
  ['IPv4-mapped, dotted', '::ffff:10.0.0.0/104', 'IPv4-mapped IPv6 prefix is ambiguous'],
  ['IPv4-mapped, hex', '::ffff:a00:0/120', 'IPv4-mapped IPv6 prefix is ambiguous'],
  ['IPv4-mapped, /128', '::ffff:1.2.3.4/128', 'IPv4-mapped IPv6 prefix is ambiguous'],
  ['over-long', `${'ffff:'.repeat(6)}255.255.255.255/1280`, 'too long'],
  ['over-long address part', `${'ffff:'.repeat(6)}255.255.255.2555/8`, 'too long'],
  ['NUL in length', '10.0.0.0/8\u0000', 'bad bits after slash'],
];

function expectError(fn: () => unknown, cls: typeof InvalidAddressError | typeof InvalidCIDRError, input: unknown, reason: string) {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(cls);
  const err = caught as InvalidAddressError;
  const fnName = cls === InvalidAddressError ? 'ParseAddr' : 'ParsePrefix';
  expect(err.message.startsWith(`${fnName}(${quoteInput(input)}): `)).toBe(true);
  expect(err.message).toContain(reason);
  expect(err.reason).toContain(reason);
  expect(err.input).toBe(input);
}

describe('parseAddrInto rejects malformed and ambiguous text', () => {
  it('has at least 60 named rows with unique names', () => {
    expect(BAD_ADDRS.length).toBeGreaterThanOrEqual(60);
    expect(new Set(BAD_ADDRS.map((r) => r[0])).size).toBe(BAD_ADDRS.length);
  });
  it.each(BAD_ADDRS)('%s', (_name, input, reason) => {
    const out = new Uint32Array([7, 7, 7, 7]);
    expectError(() => parseAddrInto(input, out), InvalidAddressError, input, reason);
    expect([...out]).toEqual([7, 7, 7, 7]); // left unchanged
    expectError(() => parseAddr(input), InvalidAddressError, input, reason);
    expectError(() => canonicalAddr(input), InvalidAddressError, input, reason);
  });
  it('quotes where it stopped, like Go', () => {
    expect(() => parseAddr('1.2.3.4:80')).toThrow('ParseAddr("1.2.3.4:80"): unexpected character (at ":80")');
    expect(() => parseAddr('fe80::1%eth0')).toThrow('ParseAddr("fe80::1%eth0"): IPv6 zones are not allowed (at "%eth0")');
    expect(() => parseAddr('010.1.1.1')).toThrow(/^ParseAddr\("010\.1\.1\.1"\): IPv4 field has octet with leading zero$/);
  });
});

describe('parsePrefix rejects malformed and ambiguous CIDRs', () => {
  it('has at least 20 named rows with unique names', () => {
    expect(BAD_CIDRS.length).toBeGreaterThanOrEqual(20);
    expect(new Set(BAD_CIDRS.map((r) => r[0])).size).toBe(BAD_CIDRS.length);
  });
  it.each(BAD_CIDRS)('%s', (_name, input, reason) => {
    expectError(() => parsePrefix(input), InvalidCIDRError, input, reason);
  });
});

// ---------------------------------------------------------------------------------------------
// Acceptance: [input, family, words, canonical text].

const GOOD_ADDRS: [string, Family, number[], string][] = [
  ['0.0.0.0', 4, [0, 0, 0, 0], '0.0.0.0'],
  ['255.255.255.255', 4, [0, 0, 0, 0xffffffff], '255.255.255.255'],
  ['10.96.0.1', 4, [0, 0, 0, 0x0a600001], '10.96.0.1'],
  ['192.168.1.5', 4, [0, 0, 0, 0xc0a80105], '192.168.1.5'],
  ['1.0.0.0', 4, [0, 0, 0, 0x01000000], '1.0.0.0'],
  ['::', 6, [0, 0, 0, 0], '::'],
  ['::1', 6, [0, 0, 0, 1], '::1'],
  ['1::', 6, [0x00010000, 0, 0, 0], '1::'],
  ['0:0:0:0:0:0:0:0', 6, [0, 0, 0, 0], '::'],
  ['0000:0000:0000:0000:0000:0000:0000:0001', 6, [0, 0, 0, 1], '::1'],
  ['2001:db8::1', 6, [0x20010db8, 0, 0, 1], '2001:db8::1'],
  ['2001:DB8::1', 6, [0x20010db8, 0, 0, 1], '2001:db8::1'],
  ['2001:0DB8:0000:0000:0000:0000:0000:0001', 6, [0x20010db8, 0, 0, 1], '2001:db8::1'],
  ['2001:db8:0:0:0::1', 6, [0x20010db8, 0, 0, 1], '2001:db8::1'],
  ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:1', 6, [0x20010db8, 0xaaaabbbb, 0xccccdddd, 0xeeee0001], '2001:db8:aaaa:bbbb:cccc:dddd:eeee:1'],
  [
    'FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF',
    6,
    [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff],
    'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  ],
  ['1:2:3:4:5:6:7::', 6, [0x00010002, 0x00030004, 0x00050006, 0x00070000], '1:2:3:4:5:6:7:0'],
  ['::2:3:4:5:6:7:8', 6, [0x00000002, 0x00030004, 0x00050006, 0x00070008], '0:2:3:4:5:6:7:8'],
  ['fd00::10', 6, [0xfd000000, 0, 0, 0x10], 'fd00::10'],
  ['fe80::1:0:0:0', 6, [0xfe800000, 0, 0x00010000, 0], 'fe80::1:0:0:0'], // tie: leftmost run
  ['fe80:0:0:1::', 6, [0xfe800000, 0x00000001, 0, 0], 'fe80:0:0:1::'],
  // Embedded IPv4 in the last 32 bits.
  ['::1.2.3.4', 6, [0, 0, 0, 0x01020304], '::102:304'],
  ['64:ff9b::192.0.2.33', 6, [0x0064ff9b, 0, 0, 0xc0000221], '64:ff9b::c000:221'],
  ['1:2:3:4:5:6:1.2.3.4', 6, [0x00010002, 0x00030004, 0x00050006, 0x01020304], '1:2:3:4:5:6:102:304'],
  [
    'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255',
    6,
    [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff],
    'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  ],
  ['::ffff:0:1.2.3.4', 6, [0, 0, 0xffff0000, 0x01020304], '::ffff:0:102:304'], // SIIT, not mapped
  // IPv4-mapped IPv6 reads as the IPv4 address, as Go's net.IP does.
  ['::ffff:1.2.3.4', 4, [0, 0, 0, 0x01020304], '1.2.3.4'],
  ['::FFFF:1.2.3.4', 4, [0, 0, 0, 0x01020304], '1.2.3.4'],
  ['::ffff:102:304', 4, [0, 0, 0, 0x01020304], '1.2.3.4'],
  ['0:0:0:0:0:ffff:0a60:0001', 4, [0, 0, 0, 0x0a600001], '10.96.0.1'],
  ['::ffff:0.0.0.0', 4, [0, 0, 0, 0], '0.0.0.0'],
];

describe('parseAddrInto accepts every form ParseAddr accepts', () => {
  it.each(GOOD_ADDRS)('%s', (input, family, words, canonical) => {
    const out = new Uint32Array(4);
    expect(parseAddrInto(input, out)).toBe(family);
    expect([...out]).toEqual(words);
    expect(parseAddr(input)).toEqual({ family, words: Uint32Array.from(words) });
    expect(canonicalAddr(input)).toBe(canonical);
    expect(formatAddr(family, out)).toBe(canonical);
    expect(canonicalAddr(canonical)).toBe(canonical);
  });
  it('accepts exactly 45 characters', () => {
    const s = 'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255';
    expect(s.length).toBe(45);
    expect(parseAddr(s).family).toBe(6);
  });
});

describe('RFC 5952 formatting', () => {
  const CASES: [string, [number, number, number, number], string][] = [
    ['all zeros', [0, 0, 0, 0], '::'],
    ['all ones', [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff], 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
    ['loopback', [0, 0, 0, 1], '::1'],
    ['API doc example, invalid name 2001:db8:0:0:0::1', [0x20010db8, 0, 0, 1], '2001:db8::1'],
    ['longest run wins over an earlier shorter one', [0x20010000, 0x00010000, 0, 1], '2001:0:1::1'],
    ['leftmost run on ties', [0x20010db8, 0, 0x00010000, 0x00000001], '2001:db8::1:0:0:1'],
    ['single zero group is 0, never ::', [0x20010db8, 0x00000001, 0x00010001, 0x00010001], '2001:db8:0:1:1:1:1:1'],
    ['alternating single zeros', [0x00010000, 0x00010000, 0x00010000, 0x00010000], '1:0:1:0:1:0:1:0'],
    ['run at the end', [0x00010000, 0, 0, 0], '1::'],
    ['run at the start, 7 groups', [0, 0, 0, 0x00000001], '::1'],
    ['run of exactly two', [0x00010002, 0x00030000, 0x00000006, 0x00070008], '1:2:3::6:7:8'],
    ['no leading zeros in groups, lowercase', [0x00ab0cd0, 0x0f000000, 0x0000000a, 0xbcdefabc], 'ab:cd0:f00::a:bcde:fabc'],
    ['no embedded dotted quad (IPv4-compatible)', [0, 0, 0, 0x01020304], '::102:304'],
    ['IPv4-mapped as family 6 stays plain IPv6', [0, 0, 0xffff, 0x01020304], '::ffff:102:304'],
    ['API doc example, valid name', [0x20010db8, 0xaaaabbbb, 0xccccdddd, 0xeeee0001], '2001:db8:aaaa:bbbb:cccc:dddd:eeee:1'],
    ['words beyond u32 are read as u32 (negative int)', [-1, -1, -1, -1], 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ];
  it.each(CASES)('%s', (_name, w, text) => {
    expect(formatIPv6(w[0], w[1], w[2], w[3])).toBe(text);
    expect(formatAddr(6, w)).toBe(text);
    expect(slowFormat6(w.map((x) => x >>> 0))).toBe(text);
  });
  it('formats IPv4 in dotted decimal without leading zeros', () => {
    expect(formatIPv4(0)).toBe('0.0.0.0');
    expect(formatIPv4(0xffffffff)).toBe('255.255.255.255');
    expect(formatIPv4(-1)).toBe('255.255.255.255');
    expect(formatIPv4(0x0a600001)).toBe('10.96.0.1');
    expect(formatIPv4(0x01020304)).toBe('1.2.3.4');
    expect(formatAddr(4, [0, 0, 0, 0xc0a80105])).toBe('192.168.1.5');
  });
  it('formats every octet in every position, at every text length (7 to 15 characters)', () => {
    // names of 13 characters or more are built another way than shorter ones (formatIPv4)
    const lengths = new Set<number>();
    for (let position = 0; position < 4; position++) {
      for (let x = 0; x < 256; x++) {
        for (const other of [0, 9, 10, 99, 100, 255]) {
          const octets = [other, other, other, other];
          octets[position] = x;
          const v = ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
          const text = formatIPv4(v);
          expect(text).toBe(octets.join('.'));
          lengths.add(text.length);
        }
      }
    }
    expect([...lengths].sort((a, b) => a - b)).toEqual([7, 8, 9, 10, 11, 12, 13, 14, 15]);
  });
  it('formats names of the same /16 alike however they interleave with names of other /16s', () => {
    // a short name is joined from the `a.b.` kept from earlier names: each must still be its own
    const highs = [0x0000, 0x0a00, 0x0a60, 0x0a6f, 0xc0a8, 0x6464, 0xffff];
    const high = fc.constantFrom(...highs);
    const low = fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.constantFrom(0, 9, 10, 99, 100, 255, 0xff00, 0xffff));
    const beyond = fc.constantFrom(0, 2 ** 32, -(2 ** 32), 2 ** 40); // formatIPv4 takes its value mod 2^32
    fc.assert(
      fc.property(fc.array(fc.tuple(high, low, beyond), { minLength: 1, maxLength: 40 }), (names) => {
        for (const [h, l, k] of names) {
          const v = ((h << 16) | l) >>> 0;
          const text = formatIPv4(v + k);
          expect(text).toBe(`${h >>> 8}.${h & 255}.${l >>> 8}.${l & 255}`);
          expect(parseAddr(text).words[3]).toBe(v);
        }
      }),
      { numRuns: 300 },
    );
  });
  it('refuses a family other than 4 or 6', () => {
    expect(() => formatAddr(5 as Family, [0, 0, 0, 0])).toThrow(InvalidArgumentError);
    expect(() => formatPrefix(5 as Family, [0, 0, 0, 0], 0)).toThrow(InvalidArgumentError);
  });
});

describe('parsePrefix / formatPrefix', () => {
  const GOOD: [string, Family, number[], number, string][] = [
    ['10.96.0.0/12', 4, [0, 0, 0, 0x0a600000], 12, '10.96.0.0/12'],
    ['0.0.0.0/0', 4, [0, 0, 0, 0], 0, '0.0.0.0/0'],
    ['255.255.255.255/32', 4, [0, 0, 0, 0xffffffff], 32, '255.255.255.255/32'],
    ['192.168.1.77/24', 4, [0, 0, 0, 0xc0a8014d], 24, '192.168.1.77/24'], // host bits kept
    ['::/0', 6, [0, 0, 0, 0], 0, '::/0'],
    ['2001:DB8::/64', 6, [0x20010db8, 0, 0, 0], 64, '2001:db8::/64'],
    ['2001:db8:0:0:0::1/128', 6, [0x20010db8, 0, 0, 1], 128, '2001:db8::1/128'],
    ['fd00::ff/120', 6, [0xfd000000, 0, 0, 0xff], 120, 'fd00::ff/120'],
    ['::1.2.3.0/120', 6, [0, 0, 0, 0x01020300], 120, '::102:300/120'],
    ['::ffff:0:0:0/96', 6, [0, 0, 0xffff0000, 0], 96, '::ffff:0:0:0/96'],
    ['0:0:0:ffff::/64', 6, [0, 0x0000ffff, 0, 0], 64, '0:0:0:ffff::/64'],
  ];
  it.each(GOOD)('%s', (input, family, words, bits, canonical) => {
    const p = parsePrefix(input);
    expect(p).toEqual({ family, words: Uint32Array.from(words), bits });
    expect(formatPrefix(p.family, p.words, p.bits)).toBe(canonical);
  });
  it("formatPrefix given parsePrefix's result whole says how to call it, and leaves the object alone", () => {
    const p = parsePrefix('10.0.0.0/24');
    let err: unknown;
    try {
      (formatPrefix as (prefix: unknown) => string)(p); // as plain JavaScript can
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toContain('call formatPrefix(p.family, p.words, p.bits)');
    expect(p).toEqual({ family: 4, words: Uint32Array.of(0, 0, 0, 0x0a000000), bits: 24 });
    expect(formatPrefix(p.family, p.words, p.bits)).toBe('10.0.0.0/24');
  });

  it('formatPrefix names the argument that is wrong: a family that is not 4 or 6 (text, null, any object), a length that is not a number', () => {
    const call = formatPrefix as (...args: unknown[]) => string;
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const cases: [unknown[], string][] = [
      [['10.0.0.0/8'], `formatPrefix's family must be 4 or 6, got "10.0.0.0/8"`],
      [[null], "formatPrefix's family must be 4 or 6, got null"],
      [[{ family: 4 }], 'call formatPrefix(p.family, p.words, p.bits)'],
      [[revoked.proxy], 'call formatPrefix(p.family, p.words, p.bits)'], // not read: no TypeError
      [[4, [0, 0, 0, 0], '8'], 'prefix length must be an integer in 0..32, got "8"'],
    ];
    for (const [args, says] of cases) {
      expect(() => call(...args)).toThrow(InvalidArgumentError);
      expect(() => call(...args)).toThrow(says);
    }
  });

  it('formatPrefix refuses out-of-range lengths', () => {
    expect(() => formatPrefix(4, [0, 0, 0, 0], 33)).toThrow(InvalidArgumentError);
    expect(() => formatPrefix(6, [0, 0, 0, 0], -1)).toThrow(InvalidArgumentError);
    expect(() => formatPrefix(6, [0, 0, 0, 0], 1.5)).toThrow(InvalidArgumentError);
    expect(formatPrefix(6, [0, 0, 0, 0], 128)).toBe('::/128');
  });
});

describe('formatAddr and formatPrefix of ipallocator/core refuse what is not an address, saying how to call them', () => {
  const p = parseAddr('10.0.0.1');
  const ADDR_CALL = 'for a = parseAddr(text), call formatAddr(a.family, a.words)';
  const PREFIX_CALL = 'for p = parsePrefix(text), call formatPrefix(p.family, p.words, p.bits)';
  const revoked = Proxy.revocable([0, 0, 0, 1], {});
  revoked.revoke();
  const ADDR_ROWS: [name: string, args: unknown[], says: string][] = [
    ["parseAddr's result as the words", [p.family, p], "formatAddr's words must be four integers in [0, 2^32)"],
    ["parseAddr's result as the family", [p], 'formatAddr takes the two fields of an address, not an address object'],
    [
      'three words',
      [6, [1, 2, 3]],
      "formatAddr's words must be four integers in [0, 2^32), w0 = bits 127..96 (IPv4: [0, 0, 0, v]), got an array of 3 values",
    ],
    ['five words', [6, [0, 0, 0, 0, 1]], 'got an array of 5 values'],
    ['no words', [4, null], "formatAddr's words must be four integers in [0, 2^32), w0 = bits 127..96 (IPv4: [0, 0, 0, v]), got null"],
    ['a string', [4, '10.0.0.1'], 'got "10.0.0.1"'],
    ['NaN', [4, [0, 0, 0, Number.NaN]], "formatAddr's words[3] must be an integer in [0, 2^32), got NaN (number)"],
    ['a fraction', [4, [0, 0, 0, 1.5]], 'words[3] must be an integer in [0, 2^32), got 1.5 (number)'],
    ['a negative word', [6, [-1, 0, 0, 0]], 'words[0] must be an integer in [0, 2^32), got -1 (number)'],
    ['a word of 2^32', [6, [0, 2 ** 32, 0, 0]], 'words[1] must be an integer in [0, 2^32), got 4294967296 (number)'],
    ['a word as text', [6, [0, 0, '1', 0]], 'words[2] must be an integer in [0, 2^32), got "1"'],
    [
      'IPv4 with the value in words[0]',
      [4, [10, 0, 0, 1]],
      'formatAddr of family 4 takes the IPv4 value in words[3] and 0 in words[0..2], got words[0] = 10',
    ],
    ['IPv4 with words[2] set', [4, [0, 0, 0xffff, 0x0a000001]], 'got words[2] = 65535 (an IPv6 address is family 6)'],
    ['unreadable words (a revoked Proxy)', [6, revoked.proxy], 'words.length could not be read'],
  ];
  it.each(ADDR_ROWS)('formatAddr: %s', (_name, args, says) => {
    const call = checkedFormatAddr as (...a: unknown[]) => string;
    expect(() => call(...args)).toThrow(InvalidArgumentError);
    expect(() => call(...args)).toThrow(says);
    if (!says.includes('could not be read')) expect(() => call(...args)).toThrow(ADDR_CALL);
  });

  const PREFIX_ROWS: [name: string, args: unknown[], says: string][] = [
    ['three words', [6, [1, 2, 3], 64], "formatPrefix's words must be four integers in [0, 2^32)"],
    ['IPv4 with the value in words[0]', [4, [10, 0, 0, 0], 8], 'formatPrefix of family 4 takes the IPv4 value in words[3]'],
    ['NaN', [6, [0x20010db8, 0, 0, Number.NaN], 64], "formatPrefix's words[3] must be an integer"],
    ["parsePrefix's result as the words", [4, parsePrefix('10.0.0.0/8'), 8], "formatPrefix's words must be four integers"],
  ];
  it.each(PREFIX_ROWS)('formatPrefix: %s', (_name, args, says) => {
    const call = formatPrefix as (...a: unknown[]) => string;
    expect(() => call(...args)).toThrow(InvalidArgumentError);
    expect(() => call(...args)).toThrow(says);
    expect(() => call(...args)).toThrow(PREFIX_CALL);
  });

  it('takes any four u32 integers (an array, a Uint32Array) and writes what the unchecked formatter writes', () => {
    for (const text of [
      '10.0.0.1',
      '0.0.0.0',
      '255.255.255.255',
      '::',
      '::1',
      '2001:db8::a:1',
      'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    ]) {
      const a = parseAddr(text);
      expect(checkedFormatAddr(a.family, a.words)).toBe(text);
      expect(checkedFormatAddr(a.family, [...a.words])).toBe(formatAddr(a.family, a.words));
    }
    expect(checkedFormatAddr(6, [0, 0, 0, 1])).toBe('::1'); // the same words as family 4's 0.0.0.1
    expect(formatPrefix(6, [0x20010db8, 0, 0, 0], 64)).toBe('2001:db8::/64');
  });

  it('reads each word once: what was checked is what is written', () => {
    let reads = 0;
    const shifty = {
      length: 4,
      0: 0,
      1: 0,
      2: 0,
      get 3() {
        reads++;
        return reads === 1 ? 0x0a000001 : Number.NaN;
      },
    };
    expect(checkedFormatAddr(4, shifty)).toBe('10.0.0.1');
    expect(reads).toBe(1);
  });
});

describe("parseAddr and parseAddrInto of ipallocator/core: a result of one's own, or words one keeps", () => {
  it.each(GOOD_ADDRS)('parseAddrInto(%s) writes the words and answers the family parseAddr gives', (input, family) => {
    const out = new Uint32Array(4);
    expect(checkedParseAddrInto(input, out)).toBe(family);
    expect(out).toEqual(parseAddr(input).words);
  });

  it('parseAddrInto writes words[0..3] of the array given, a view into a larger buffer included, and nothing past them', () => {
    const buffer = new Uint32Array(12).fill(7);
    expect(checkedParseAddrInto('2001:db8::1', buffer.subarray(4, 8))).toBe(6);
    expect(checkedParseAddrInto('10.0.0.1', buffer.subarray(8))).toBe(4);
    expect([...buffer]).toEqual([7, 7, 7, 7, 0x20010db8, 0, 0, 1, 0, 0, 0, 0x0a000001]);
  });

  it('each parseAddr result has words of its own: a later parse, or a transfer of its buffer, leaves the others as they were', () => {
    const a = parseAddr('10.96.0.1');
    const b = parseAddr('2001:db8::2');
    parseAddr('10.96.0.3');
    expect([a.words, b.words].map((w) => [w.length, w.byteOffset, w.buffer.byteLength])).toEqual([
      [4, 0, 16],
      [4, 0, 16],
    ]);
    structuredClone(b.words.buffer, { transfer: [b.words.buffer] }); // detaches b's, and only b's
    expect(b.words.length).toBe(0);
    expect([...a.words]).toEqual([0, 0, 0, 0x0a600001]);
  });

  const BAD_TEXT: [name: string, text: unknown][] = [
    ['an octal field', '010.1.1.1'],
    ['a zone', 'fe80::1%eth0'],
    ['a malformed IPv6 address', '2001:db8::g'],
    ['too many groups', '1:2:3:4:5:6:7:8:9'],
    ['not a string', 42],
  ];
  it.each(BAD_TEXT)('parseAddrInto of %s throws what parseAddr throws and leaves the words as they were', (_name, text) => {
    const thrown = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e;
      }
      return undefined;
    };
    const out = Uint32Array.of(1, 2, 3, 4);
    const e = thrown(() => checkedParseAddrInto(text, out));
    expect(e).toBeInstanceOf(InvalidAddressError);
    expect((e as Error).message).toBe((thrown(() => parseAddr(text)) as Error).message);
    expect([...out]).toEqual([1, 2, 3, 4]);
  });

  const BAD_WORDS: [name: string, words: unknown, says: string][] = [
    ['a Uint32Array of 3', new Uint32Array(3), 'got a Uint32Array of length 3'],
    ['an array of numbers', [0, 0, 0, 0], 'got an array of 4 values'],
    ['an Int32Array', new Int32Array(4), 'got an Int32Array'],
    ['a Proxy of a Uint32Array', new Proxy(new Uint32Array(4), {}), 'got an object that only inherits from Uint32Array (a Proxy of one?)'],
    ['nothing', undefined, 'got undefined'],
  ];
  it.each(BAD_WORDS)('parseAddrInto refuses %s as the words: InvalidArgumentError, nothing written', (_name, words, says) => {
    const call = checkedParseAddrInto as (text: unknown, words: unknown) => unknown;
    expect(() => call('10.0.0.1', words)).toThrow(InvalidArgumentError);
    expect(() => call('10.0.0.1', words)).toThrow(`parseAddrInto's words must be a Uint32Array of length 4 or more, ${says}`);
    if (ArrayBuffer.isView(words) || Array.isArray(words)) expect(Array.from(words as ArrayLike<number>).every((x) => x === 0)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties.

const u32 = fc.integer({ min: 0, max: 0xffffffff });
/** Words with many zero groups, so that every zero-run shape occurs. */
const group = fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 0xffff }), fc.constantFrom(1, 0xffff));
const word = fc.tuple(group, group).map(([a, b]) => ((a << 16) | b) >>> 0);
const words6 = fc.tuple(fc.oneof(word, u32), word, word, word);
const isMapped = (w: readonly number[]) => w[0] === 0 && w[1] === 0 && w[2] === 0xffff;

describe('round trips', () => {
  it('IPv4: parse(format(v)) == v and the text is canonical', () => {
    fc.assert(
      fc.property(u32, (v) => {
        const text = formatIPv4(v);
        const p = parseAddr(text);
        expect(p.family).toBe(4);
        expect(p.words[3]).toBe(v);
        expect(canonicalAddr(text)).toBe(text);
        expect(slowParse(text)).toEqual({ family: 4, words: [0, 0, 0, v] });
      }),
      { numRuns: 2000 },
    );
  });

  it('IPv6: parse(format(words)) == words (mapped ones read as IPv4) and the text is canonical', () => {
    fc.assert(
      fc.property(words6, (w) => {
        const text = formatIPv6(w[0], w[1], w[2], w[3]);
        expect(text).toBe(slowFormat6(w));
        const p = parseAddr(text);
        if (isMapped(w)) {
          expect(p).toEqual({ family: 4, words: Uint32Array.from([0, 0, 0, w[3]]) });
        } else {
          expect(p).toEqual({ family: 6, words: Uint32Array.from(w) });
          expect(canonicalAddr(text)).toBe(text);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('format(parse(x)) is canonical for any accepted rewriting of an address', () => {
    // Non-canonical spellings of the same address: upper case, padded groups, no compression,
    // compression of a shorter run, embedded dotted quad.
    const spellings = words6.chain((w) => {
      const g: number[] = [];
      for (const x of w) g.push(x >>> 16, x & 0xffff);
      return fc
        .record({
          w: fc.constant(w),
          pad: fc.boolean(),
          upper: fc.boolean(),
          dotted: fc.boolean(),
          cut: fc.option(fc.tuple(fc.nat(7), fc.nat(7)), { nil: undefined }),
        })
        .map(({ w, pad, upper, dotted, cut }) => {
          let fields = g.map((x) => (pad ? x.toString(16).padStart(4, '0') : x.toString(16)));
          if (dotted) fields = [...fields.slice(0, 6), formatIPv4(w[3])];
          let text = fields.join(':');
          if (cut) {
            // Replace fields [a, b] by :: when they are all zero and it leaves something to expand.
            const [a, b] = cut[0] <= cut[1] ? cut : [cut[1], cut[0]];
            if (g.slice(a, b + 1).every((x) => x === 0) && !(dotted && b >= 6)) {
              text = `${fields.slice(0, a).join(':')}::${fields.slice(b + 1).join(':')}`;
            }
          }
          return { w, text: upper ? text.toUpperCase() : text };
        });
    });
    fc.assert(
      fc.property(spellings, ({ w, text }) => {
        const expected = isMapped(w) ? formatIPv4(w[3]) : formatIPv6(w[0], w[1], w[2], w[3]);
        expect(canonicalAddr(text)).toBe(expected);
        expect(slowParse(text)).not.toBeNull();
      }),
      { numRuns: 3000 },
    );
  });
});

describe('agreement with the slow parser on arbitrary text', () => {
  const alphabet = fc.constantFrom(...'0123456789abcdefABCDEFxg:::::....% /[]\u0000'.split(''));
  const junk = fc.array(alphabet, { maxLength: 47 }).map((a) => a.join(''));
  // Mutations of valid addresses: the interesting inputs sit one edit away from valid ones.
  const mutated = fc
    .tuple(
      fc.oneof(
        u32.map(formatIPv4),
        words6.map((w) => formatIPv6(w[0], w[1], w[2], w[3])),
      ),
      fc.nat(46),
      fc.constantFrom('', ':', '.', '0', 'f', '::', '1.2.3.4', '%', ' ', '00'),
      fc.nat(2),
    )
    .map(([s, at, ins, del]) => {
      const i = at % (s.length + 1);
      return s.slice(0, i) + ins + s.slice(i + del);
    });

  // Dotted-decimal look-alikes: 1..5 fields of 0..4 digits, for the unrolled IPv4 fast path.
  const dotted = fc.array(fc.stringMatching(/^[0-9]{0,4}$/), { minLength: 1, maxLength: 5 }).map((fields) => fields.join('.'));

  it('accepts exactly what the oracle accepts, with the same value', () => {
    fc.assert(
      fc.property(fc.oneof(junk, mutated, dotted), (s) => {
        const want = slowParse(s);
        let got: { family: Family; words: number[] } | null = null;
        try {
          const p = parseAddr(s);
          got = { family: p.family, words: [...p.words] };
        } catch (e) {
          expect(e).toBeInstanceOf(InvalidAddressError);
        }
        expect(got).toEqual(want);
      }),
      { numRuns: 20000 },
    );
  });

  it('parseIPv4Fast is the value parseAddrInto gives colon-free IPv4 text, and −1 for everything else', () => {
    const w = new Uint32Array(4);
    fc.assert(
      fc.property(fc.oneof(junk, mutated, dotted, u32.map(formatIPv4)), (s) => {
        let want = -1;
        try {
          if (parseAddrInto(s, w) === 4 && !s.includes(':')) want = w[3]!;
        } catch {
          // rejected: −1
        }
        expect(parseIPv4Fast(s)).toBe(want);
      }),
      { numRuns: 20000 },
    );
  });

  it("canonicalOf (the allocators' shortcut: colon-free IPv4 text as it is) equals formatAddr for every accepted text", () => {
    const w = new Uint32Array(4);
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof(junk, mutated, dotted, u32.map(formatIPv4)), (s) => {
        let family: Family;
        try {
          family = parseAddrInto(s, w);
        } catch {
          return;
        }
        accepted++;
        expect(canonicalOf(s, family, w)).toBe(formatAddr(family, w));
      }),
      { numRuns: 20000 },
    );
    expect(accepted).toBeGreaterThan(5000);
  });
});

describe('IPv6 text both ways against the slow formatter', () => {
  // Groups drawn mostly from 0 and 1, so every shape of zero run (none, lone zeros, ties, runs at
  // either end, all zeros) is common, not a 1-in-2^16 event.
  const group = fc.oneof(fc.constant(0), fc.constant(0), fc.constant(1), fc.integer({ min: 0, max: 0xffff }));
  const zeroHeavy = fc
    .array(group, { minLength: 8, maxLength: 8 })
    .map((g) => [0, 1, 2, 3].map((i) => ((g[2 * i]! << 16) | g[2 * i + 1]!) >>> 0));

  it('format agrees with the slow formatter; parse(format(w)) = w; the text is canonical by isCanonical', () => {
    const out = new Uint32Array(4);
    fc.assert(
      fc.property(fc.oneof(zeroHeavy, words6), (w) => {
        const text = formatIPv6(w[0]!, w[1]!, w[2]!, w[3]!);
        expect(text).toBe(slowFormat6(w));
        const family = parseAddrInto(text, out);
        if (isMapped(w)) {
          expect(family).toBe(4);
          expect(isCanonical(text, family, out)).toBe(false); // its canonical text is dotted
        } else {
          expect(family).toBe(6);
          expect([...out]).toEqual(w);
          expect(isCanonical(text, family, out)).toBe(true);
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('isCanonical(text) is formatAddr(parse(text)) === text, for every accepted spelling', () => {
    const out = new Uint32Array(4);
    // canonical text with one edit: upper case, a padded or unpadded group, a moved or missing ::
    const spelled = fc
      .tuple(fc.oneof(zeroHeavy, words6), fc.nat(7), fc.constantFrom('upper', 'pad', 'expand', 'first-run'))
      .map(([w, at, how]) => {
        const g: number[] = [];
        for (const x of w) g.push(x >>> 16, x & 0xffff);
        const hex = g.map((x) => x.toString(16));
        if (how === 'upper') return formatIPv6(w[0]!, w[1]!, w[2]!, w[3]!).toUpperCase();
        if (how === 'pad') hex[at] = hex[at]!.padStart(4, '0');
        if (how === 'first-run') {
          // compress the first run of ≥ 1 zero groups, whatever its length
          const i = g.indexOf(0);
          if (i >= 0) {
            let j = i;
            while (j < 8 && g[j] === 0) j++;
            return `${hex.slice(0, i).join(':')}::${hex.slice(j).join(':')}`;
          }
        }
        return hex.join(':');
      });
    let noncanonical = 0;
    fc.assert(
      fc.property(spelled, (text) => {
        let family: Family;
        try {
          family = parseAddrInto(text, out);
        } catch {
          return; // a compression of all eight groups of a run that fills the address, etc.
        }
        // asked right after the parse (what the parser learned on the way), then after a format
        const known = isKnownCanonical(text);
        const got = isCanonical(text, family, out);
        const want = formatAddr(family, out) === text;
        if (!want) noncanonical++;
        expect(got, text).toBe(want);
        if (known) expect(want, text).toBe(true);
        expect(isCanonical(text, family, out)).toBe(want);
        expect(canonicalOf(text, family, out)).toBe(formatAddr(family, out));
      }),
      { numRuns: 5000 },
    );
    expect(noncanonical).toBeGreaterThan(1000);
  });
});

describe('agreement with ipaddr.js', () => {
  it('ipaddr.js reads our IPv4 text back to the same address and text', () => {
    fc.assert(
      fc.property(u32, (v) => {
        const ours = formatIPv4(v);
        const theirs = ipaddr.parse(ours);
        expect(theirs.kind()).toBe('ipv4');
        expect(theirs.toNormalizedString()).toBe(ours);
        expect(ipaddr.IPv4.isValidFourPartDecimal(ours)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('ipaddr.js toRFC5952String of our IPv6 text is byte-equal to ours', () => {
    fc.assert(
      fc.property(words6, (w) => {
        const ours = formatIPv6(w[0], w[1], w[2], w[3]);
        const theirs = ipaddr.IPv6.parse(ours);
        expect(theirs.toRFC5952String()).toBe(ours);
        const groups: string[] = [];
        for (const x of w) groups.push((x >>> 16).toString(16), (x & 0xffff).toString(16));
        expect(theirs.toNormalizedString()).toBe(groups.join(':'));
      }),
      { numRuns: 3000 },
    );
  });

  /**
   * The lenient classes: forms ipaddr.js accepts and Go's ParseAddr (and we) reject.
   * Returns the class name, or null if the input is in none of them.
   */
  function lenientClass(s: string): string | null {
    if (s.includes('%')) return 'IPv6 zone';
    if (!s.includes(':')) {
      if (!ipaddr.IPv4.isValidFourPartDecimal(s)) return 'IPv4 classful/hex/octal/short form';
      return null;
    }
    const dotted = s.slice(s.lastIndexOf(':') + 1);
    if (dotted.includes('.') && !ipaddr.IPv4.isValidFourPartDecimal(dotted)) return 'lenient embedded IPv4';
    if (/(^|:)0[0-9]+\./.test(s) || /\.0[0-9]/.test(s)) return 'leading zeros in embedded IPv4';
    return null;
  }

  const candidates = fc.oneof(
    fc.constantFrom(
      '010.1.1.1',
      '1.1.1',
      '1.1',
      '1',
      '0x7f.0.0.1',
      '0x7f000001',
      '017700000001',
      '4294967295',
      '127.1',
      '1.2.3.04',
      'fe80::1%eth0',
      'fe80::1%1',
      '::ffff:0x1.2.3.4',
      '::01.2.3.4',
      '::ffff:1.2.3.04',
      '::1.2.3',
      '1.2.3.4',
      '::1',
      '2001:db8::1',
      '::ffff:1.2.3.4',
    ),
    fc.array(fc.constantFrom(...'0123456789abcdefx:.%'.split('')), { maxLength: 20 }).map((a) => a.join('')),
  );

  it('where ipaddr.js accepts and we reject, the input is in a documented lenient class', () => {
    fc.assert(
      fc.property(candidates, (s) => {
        let ours = true;
        try {
          parseAddr(s);
        } catch {
          ours = false;
        }
        const theirs = ipaddr.isValid(s);
        if (ours) {
          expect(theirs).toBe(true); // we never accept what ipaddr.js rejects
          // Same value, except that ipaddr.js reads `::a.b.c.d` (IPv4-compatible) as IPv4-mapped.
          if (!s.includes('.')) {
            const p = parseAddr(s);
            const them = ipaddr.process(s);
            expect(formatAddr(p.family, p.words)).toBe(them.kind() === 'ipv6' ? (them as ipaddr.IPv6).toRFC5952String() : them.toString());
          }
        } else if (theirs) {
          expect(lenientClass(s)).not.toBeNull();
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('documents the known disagreement: ipaddr.js reads ::a.b.c.d as IPv4-mapped', () => {
    expect(ipaddr.parse('::1.2.3.4').toString()).toBe('::ffff:102:304');
    expect(canonicalAddr('::1.2.3.4')).toBe('::102:304');
  });
});

describe('parsePrefix against the oracle', () => {
  const addrText = fc.oneof(
    u32.map(formatIPv4),
    words6.map((w) => formatIPv6(w[0], w[1], w[2], w[3])),
    fc.constantFrom('::ffff:1.2.3.4', '010.0.0.0', 'fe80::1%eth0', '1.2.3', '', '::'),
  );
  const bitsText = fc.oneof(
    fc.nat(140).map(String),
    fc.constantFrom('', '08', '00', '+8', '-0', ' 8', '8 ', '1e1', '0x8', '0128', '1000', '32.0'),
  );

  it('accepts address/bits exactly when the address is valid, not IPv4-mapped, and bits are canonical decimal in range', () => {
    fc.assert(
      fc.property(addrText, bitsText, (a, b) => {
        const s = `${a}/${b}`;
        const addr = slowParse(a);
        const mapped = addr !== null && addr.family === 4 && a.includes(':');
        const max = addr?.family === 4 ? 32 : 128;
        const goodBits = /^(0|[1-9][0-9]*)$/.test(b) && Number(b) <= max;
        if (addr !== null && !mapped && goodBits) {
          expect(parsePrefix(s)).toEqual({ family: addr.family, words: Uint32Array.from(addr.words), bits: Number(b) });
        } else {
          expect(() => parsePrefix(s)).toThrow(InvalidCIDRError);
        }
      }),
      { numRuns: 5000 },
    );
  });
});

describe('non-string input', () => {
  it('is always InvalidAddressError / InvalidCIDRError, never a crash or a coercion', () => {
    fc.assert(
      fc.property(
        fc.anything().filter((v) => typeof v !== 'string'),
        (v) => {
          expect(() => parseAddrInto(v, new Uint32Array(4))).toThrow(InvalidAddressError);
          expect(() => canonicalAddr(v)).toThrow(InvalidAddressError);
          expect(() => parsePrefix(v)).toThrow(InvalidCIDRError);
        },
      ),
      { numRuns: 500 },
    );
  });
});

// parseAddrInto answers the text an allocator has just formatted or checked from a one-entry memo
// (lastCanonical in adapters/address.ts): what it answers must be what the text says, whatever
// came in between and however the formatter's input read.
describe('parseAddrInto after formatting and checking (its memo of the last canonical text)', () => {
  const read = (text: string) => {
    const out = new Uint32Array(4);
    const family = parseAddrInto(text, out);
    return { family, words: [...out] };
  };

  it('answers each text as the slow parser does, in any order of formats, checks and parses', () => {
    const step = fc.oneof(
      u32.map((v) => ({ kind: 'format4' as const, v })),
      fc.tuple(u32, u32, u32, u32).map((w) => ({ kind: 'format6' as const, w })),
      // IPv4-mapped and IPv4-compatible values, whose IPv6 text is read as IPv4 and as IPv6
      u32.map((v) => ({ kind: 'format6' as const, w: [0, 0, 0xffff, v] })),
      u32.map((v) => ({ kind: 'format6' as const, w: [0, 0, 0, v] })),
    );
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 6 }), (steps) => {
        const texts: string[] = [];
        for (const s of steps) {
          const text = s.kind === 'format4' ? formatIPv4(s.v) : formatIPv6(s.w[0]!, s.w[1]!, s.w[2]!, s.w[3]!);
          texts.push(text);
          expect(read(text)).toEqual(slowParse(text)); // just formatted
          const words = new Uint32Array(4);
          isCanonical(text, parseAddrInto(text, words), words); // just checked
          expect(read(text)).toEqual(slowParse(text));
        }
        for (const text of texts) expect(read(text)).toEqual(slowParse(text)); // formatted earlier
        // checked, not formatted: each earlier text parsed and found canonical again, in reverse
        // order (so not the memo's entry), then read back
        for (const text of [...texts].reverse()) {
          const words = new Uint32Array(4);
          isCanonical(text, parseAddrInto(text, words), words);
          expect(read(text)).toEqual(slowParse(text));
        }
      }),
      { numRuns: 500 },
    );
  });

  it("a check given words other than the text's does not make the text read as those words", () => {
    const words = new Uint32Array(4);
    formatIPv4(1); // the memo holds another text
    parseAddrInto('2001:db8::1', words);
    const other = Uint32Array.of(0x20010db8, 0, 0, 2);
    isCanonical('2001:db8::1', 6, other); // misuse: words of 2001:db8::2, same shape and length
    expect(read('2001:db8::1')).toEqual({ family: 6, words: [0x20010db8, 0, 0, 1] });
  });

  it('remembers the text written, not a value that reads differently each time', () => {
    let reads = 0;
    const shifty = { valueOf: () => (reads++ === 0 ? 0x0a000001 : 0xc0a80001) } as unknown as number;
    const text = formatIPv4(shifty);
    expect(read(text)).toEqual(slowParse(text));
    // words out of u32 range are written mod 2^32, and remembered so
    const mapped = formatIPv6(2 ** 32, -(2 ** 32), 0xffff + 2 ** 32, 0x0a000001);
    expect(read(mapped)).toEqual({ family: 4, words: [0, 0, 0, 0x0a000001] });
    const big = formatIPv6(0xfd00 * 2 ** 16 + 2 ** 32, 0, 0, 1);
    expect(big).toBe('fd00::1');
    expect(read(big)).toEqual({ family: 6, words: [0xfd000000, 0, 0, 1] });
  });

  it('still refuses the empty text and non-strings, before anything was formatted or after', () => {
    expect(() => parseAddrInto('', new Uint32Array(4))).toThrow(InvalidAddressError);
    formatIPv4(0);
    expect(read('0.0.0.0')).toEqual({ family: 4, words: [0, 0, 0, 0] });
    expect(() => parseAddrInto('', new Uint32Array(4))).toThrow(InvalidAddressError);
    expect(() => parseAddrInto({ toString: () => '0.0.0.0' }, new Uint32Array(4))).toThrow(InvalidAddressError);
  });
});
