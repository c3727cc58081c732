// Address text at the API edge: strict parsers and canonical formatters for IPv4/IPv6 addresses
// and prefixes. Everything inside the allocator works on integers; this file is where text
// turns into integers and back.
//
// An address is four u32 words with big-endian meaning, w0 = bits 127..96:
//
//   2001:db8::a:1  →  w0 = 0x20010db8  w1 = 0x00000000  w2 = 0x00000000  w3 = 0x000a0001
//   10.96.0.1      →  w0 = 0           w1 = 0           w2 = 0           w3 = 0x0a600001
//
// Acceptance follows Go's `netip.ParseAddr` / `netip.ParsePrefix` (what the Kubernetes allocator
// uses), with two deliberate narrowings: IPv6 zones (`fe80::1%eth0`) are rejected, and an IPv6
// group may have at most 4 hex digits (Go accepts `00001` because it only checks the value).
// IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`, `::ffff:102:304`) parse as the IPv4 address, as
// every upstream entry point taking a `net.IP` does (see docs/semantics.md); as prefixes they are
// rejected as ambiguous.
//
// Output is canonical: dotted decimal without leading zeros; RFC 5952 for IPv6 (lowercase, no
// leading zeros in a group, the longest run of ≥ 2 zero groups as `::`, leftmost on ties, a lone
// zero group written `0`, never an embedded dotted quad).
//
// Speed: the parsers scan the string once with charCodeAt, keep their state in locals and one
// module-level scratch array, and return status codes internally; only the exported wrappers
// throw, and the error text is built only on that path. Plain dotted quads and plain IPv6 go
// through lean fast paths first (parseV4Value, parseV6Value) that read each character once and
// only say "not mine" on anything else (the IPv6 one takes lowercase digits only). The IPv6
// formatter writes char codes into a scratch buffer (the `::` run from a table of the 256
// zero-group masks) and builds the one flat string from them in a single call, as the IPv4
// formatter does for dotted quads of 13 characters or more. Concatenating pieces would be
// cheaper to build but gives a rope (V8 joins flat only below 13 characters), which V8 flattens,
// at more than the difference, the first time the text is hashed or read (as a Map key, a
// record name, JSON). A canonical-form check compares the text with the words
// instead of formatting (isCanonical); right after the IPv6 fast path parsed it, from where its
// `::` stands and its length alone.

import { InvalidAddressError, InvalidArgumentError, InvalidCIDRError } from './errors.ts';
import { readMember } from './input.ts';
import { quoteInput, quoteText } from './quote.ts';

/** The address family: 4 for IPv4 (including IPv4-mapped IPv6 input), 6 for IPv6. */
export type Family = 4 | 6;

/** Longest valid address text: `ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255`. */
const MAX_ADDR_TEXT = 45;
/** Longest dotted quad: `255.255.255.255`. */
const MAX_V4_TEXT = 15;
/** Longest valid prefix text: an address plus `/128`. */
const MAX_PREFIX_TEXT = MAX_ADDR_TEXT + 4;

// ---------------------------------------------------------------------------------------------
// Failure reporting. The internal parsers return 0 on failure and leave the reason here; the
// reason strings are constants, so a failing internal parse allocates nothing either.

const R_NOT_STRING = 'expected a string';
const R_EMPTY = 'empty string';
const R_TOO_LONG = 'address string too long (an address has at most 45 characters)';
const R_UNABLE = 'unable to parse IP';
const R_MISSING_V6 = 'missing IPv6 address';
const R_ZONE = 'IPv6 zones are not allowed';
const R_V4_LEADING_ZERO = 'IPv4 field has octet with leading zero';
const R_V4_GT255 = 'IPv4 field has value >255';
const R_V4_NO_DIGIT = 'IPv4 field must have at least one digit';
const R_V4_TOO_LONG = 'IPv4 address too long';
const R_V4_TOO_SHORT = 'IPv4 address too short';
const R_UNEXPECTED = 'unexpected character';
const R_V6_FIELD_LONG = 'IPv6 field has more than 4 hex digits';
const R_V6_NO_DIGIT = 'each colon-separated field must have at least one digit';
const R_V6_EMBED_PLACE = 'embedded IPv4 address must replace the final 2 fields of the address';
const R_V6_EMBED_ROOM = 'too many hex fields to fit an embedded IPv4 at the end of the address';
const R_V6_WANT_COLON = 'unexpected character, want colon';
const R_V6_COLON_END = 'colon must be followed by more characters';
const R_V6_MULTI_ELLIPSIS = 'multiple :: in address';
const R_V6_TRAILING = 'trailing garbage after address';
const R_V6_TOO_SHORT = 'address string too short';
const R_V6_EMPTY_ELLIPSIS = 'the :: must expand to at least one field of zeros';

/** Reason of the last internal failure. */
let failReason = '';
/** Index into the text where the failure was found, or -1; quoted as `(at "…")` like Go. */
let failAt = -1;
/** End of the parsed span (the address part of a prefix ends before the `/`). */
let failEnd = 0;

function fail(reason: string, at: number, end: number): 0 {
  failReason = reason;
  failAt = at;
  failEnd = end;
  return 0;
}

/** The reason of the last failure, with Go's `(at "…")` suffix when there is a position. */
function failText(s: string): string {
  if (failAt < 0) return failReason;
  return `${failReason} (at ${quoteText(s.slice(failAt, failEnd))})`;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  try {
    if (Array.isArray(v)) return 'array';
  } catch {
    // a revoked Proxy: Array.isArray throws on it, and the refusal must not
  }
  return typeof v;
}

// ---------------------------------------------------------------------------------------------
// Parsing.

// The tables and scratch buffers of the hot paths are plain arrays of small integers, built
// element by element so that V8 keeps them packed, not typed arrays: once any ArrayBuffer in the
// process has been detached, which every WebAssembly.Memory.grow does (the allocator's index
// grows its memory), V8 checks every typed-array access for detachment, and parsing and
// formatting an IPv6 address make about a hundred such accesses (measured: 10–15 % slower).

/** Builds a packed array of n small integers. */
function smallInts(n: number, value: number): number[] {
  return Array.from({ length: n }, () => value);
}

/** Hex digit values for char codes 0..127; -1 for anything else. */
const HEX_VALUE = smallInts(128, -1);
for (let c = 0; c < 10; c++) HEX_VALUE[48 + c] = c;
for (let c = 0; c < 6; c++) {
  HEX_VALUE[97 + c] = 10 + c; // a-f
  HEX_VALUE[65 + c] = 10 + c; // A-F
}

const CH_DOT = 46; // .
const CH_COLON = 58; // :
const CH_PERCENT = 37; // %

/**
 * Parses s[start, end) as dotted-decimal IPv4 (exactly four fields, 0..255, no leading zeros).
 * Returns the address + 1 (1 .. 2^32) so that 0 can mean failure.
 */
function parseV4(s: string, start: number, end: number, embedded: boolean): number {
  let acc = 0; // finished fields, shifted in
  let val = 0; // current field
  let digits = 0; // digits in the current field
  let fields = 0; // finished fields
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    const d = c - 48;
    if (d >= 0 && d <= 9) {
      if (digits === 1 && val === 0) return fail(R_V4_LEADING_ZERO, -1, end);
      val = val * 10 + d;
      digits++;
      if (val > 255) return fail(R_V4_GT255, -1, end);
    } else if (c === CH_DOT) {
      // .1.2.3   1.2.3.   1..2.3
      if (digits === 0 || i === end - 1) return fail(R_V4_NO_DIGIT, i, end);
      // 1.2.3.4.5
      if (fields === 3) return fail(R_V4_TOO_LONG, -1, end);
      acc = (acc << 8) | val;
      fields++;
      val = 0;
      digits = 0;
    } else {
      // a `%` ends an IPv6 address's text before its zone: an embedded IPv4 address is followed
      // by one; after a plain IPv4 address it is any other character, as Go says
      if (c === CH_PERCENT && embedded) return fail(R_ZONE, i, end);
      return fail(R_UNEXPECTED, i, end);
    }
  }
  if (fields < 3) return fail(R_V4_TOO_SHORT, -1, end);
  return (((acc << 8) | val) >>> 0) + 1;
}

/** The eight 16-bit groups of the IPv6 address being parsed or formatted. */
const groups = smallInts(8, 0);

/** Internal family codes: a plain IPv6 address, or an IPv4-mapped one (`::ffff:a.b.c.d`). */
const FAM_V6 = 6;
const FAM_MAPPED = 46;

/**
 * Parses s[start, end) as IPv6 (Go's grammar minus zones). On success writes the four words
 * (an IPv4-mapped address as [0, 0, 0, v4]) and returns FAM_V6 or FAM_MAPPED; on failure
 * returns 0 and leaves `out` alone.
 */
function parseV6(s: string, start: number, end: number, out: Uint32Array): number {
  const g = groups;
  let i = start;
  let n = 0; // groups parsed
  let ellipsis = -1; // group index where `::` stands

  // Leading `::`, possibly the whole address.
  if (end - i >= 2 && s.charCodeAt(i) === CH_COLON && s.charCodeAt(i + 1) === CH_COLON) {
    ellipsis = 0;
    i += 2;
    if (i === end) {
      out[0] = 0;
      out[1] = 0;
      out[2] = 0;
      out[3] = 0;
      return FAM_V6;
    }
  }

  while (n < 8) {
    // One group of 1..4 hex digits.
    let acc = 0;
    let off = i;
    for (; off < end; off++) {
      const c = s.charCodeAt(off);
      const h = c < 128 ? HEX_VALUE[c]! : -1;
      if (h < 0) break;
      if (off - i === 4) return fail(R_V6_FIELD_LONG, i, end);
      acc = (acc << 4) | h;
    }
    if (off === i) {
      if (i < end) {
        const c = s.charCodeAt(i);
        if (c === CH_PERCENT) return fail(R_ZONE, i, end);
        if (c !== CH_COLON && c !== CH_DOT) return fail(R_UNEXPECTED, i, end);
      }
      return fail(R_V6_NO_DIGIT, i, end);
    }

    // Followed by a dot: the digits start an embedded IPv4 address, which must end the text.
    if (off < end && s.charCodeAt(off) === CH_DOT) {
      if (ellipsis < 0 && n !== 6) return fail(R_V6_EMBED_PLACE, i, end);
      if (n + 2 > 8) return fail(R_V6_EMBED_ROOM, i, end);
      const v4 = parseV4(s, i, end, true);
      if (v4 === 0) {
        if (failReason !== R_ZONE) failReason = `invalid embedded IPv4 address: ${failReason}`;
        if (failAt < 0) failAt = i;
        return 0;
      }
      const v = v4 - 1;
      g[n++] = v >>> 16;
      g[n++] = v & 0xffff;
      i = end;
      break;
    }

    g[n++] = acc;
    i = off;
    if (i === end) break;

    // Otherwise a colon and more must follow.
    const c = s.charCodeAt(i);
    if (c !== CH_COLON) return fail(c === CH_PERCENT ? R_ZONE : R_V6_WANT_COLON, i, end);
    if (i + 1 === end) return fail(R_V6_COLON_END, i, end);
    i++;
    if (s.charCodeAt(i) === CH_COLON) {
      if (ellipsis >= 0) return fail(R_V6_MULTI_ELLIPSIS, i, end);
      ellipsis = n;
      i++;
      if (i === end) break;
    }
  }

  if (i !== end) return fail(R_V6_TRAILING, i, end);

  if (n < 8) {
    if (ellipsis < 0) return fail(R_V6_TOO_SHORT, -1, end);
    // Move the groups after `::` to the end and zero the gap.
    const gap = 8 - n;
    for (let j = n - 1; j >= ellipsis; j--) g[j + gap] = g[j]!;
    for (let j = ellipsis + gap - 1; j >= ellipsis; j--) g[j] = 0;
  } else if (ellipsis >= 0) {
    return fail(R_V6_EMPTY_ELLIPSIS, -1, end);
  }

  if ((g[0]! | g[1]! | g[2]! | g[3]! | g[4]!) === 0 && g[5] === 0xffff) {
    out[0] = 0;
    out[1] = 0;
    out[2] = 0;
    out[3] = (g[6]! << 16) | g[7]!;
    return FAM_MAPPED;
  }
  out[0] = (g[0]! << 16) | g[1]!;
  out[1] = (g[2]! << 16) | g[3]!;
  out[2] = (g[4]! << 16) | g[5]!;
  out[3] = (g[6]! << 16) | g[7]!;
  return FAM_V6;
}

/**
 * Parses s[start, end) (already known to be a string of 1..45 characters) as in `ParseAddr`.
 * Returns 4, FAM_V6 or FAM_MAPPED, or 0 on failure. Dispatches like Go: the first `.`, `:`
 * or `%` decides.
 */
function parseSpan(s: string, start: number, end: number, out: Uint32Array): number {
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c === CH_DOT) {
      const v4 = parseV4(s, start, end, false);
      if (v4 === 0) return 0;
      out[0] = 0;
      out[1] = 0;
      out[2] = 0;
      out[3] = v4 - 1;
      return 4;
    }
    if (c === CH_COLON) return parseV6(s, start, end, out);
    if (c === CH_PERCENT) return fail(R_MISSING_V6, -1, end);
  }
  return fail(R_UNABLE, -1, end);
}

/**
 * Parses address text into `out[0..3]` (w0 = bits 127..96; IPv4 as [0, 0, 0, v4]) and returns
 * its family. Accepts exactly what Go's `netip.ParseAddr` accepts, minus IPv6 zones and IPv6
 * groups of more than 4 hex digits; IPv4-mapped IPv6 returns 4 with the IPv4 value.
 * Throws InvalidAddressError (`ParseAddr("…"): reason`) for anything else, including non-strings;
 * `out` is left unchanged then. `out` must have length ≥ 4. Allocates nothing on success.
 * @internal
 */
export function parseAddrInto(text: unknown, out: Uint32Array): Family {
  if (text === lastCanonical) {
    // the text an allocator has just formatted or checked (an event's name, a release of it)
    const w = lastCanonicalWords;
    out[0] = w[0]!;
    out[1] = w[1]!;
    out[2] = w[2]!;
    out[3] = w[3]!;
    return lastCanonicalFamily;
  }
  if (typeof text !== 'string') throw new InvalidAddressError(text, `${R_NOT_STRING}, got ${typeName(text)}`);
  const n = text.length;
  if (n === 0) throw new InvalidAddressError(text, R_EMPTY);
  if (n > MAX_ADDR_TEXT) throw new InvalidAddressError(text, R_TOO_LONG);
  if (n <= MAX_V4_TEXT) {
    const v4 = parseV4Value(text, n);
    if (v4 >= 0) {
      putV4(out, v4);
      return 4;
    }
  }
  if (parseV6Value(text, n, out)) return 6;
  const f = parseSpan(text, 0, n, out);
  if (f === 0) throw new InvalidAddressError(text, failText(text));
  return f === FAM_V6 ? 6 : 4;
}

/** IPv4 as the four words parseAddrInto writes: [0, 0, 0, v]. */
function putV4(out: Uint32Array, v: number): void {
  out[0] = 0;
  out[1] = 0;
  out[2] = 0;
  out[3] = v;
}

/**
 * The u32 value of `text` when it is a plain dotted quad (exactly what parseAddrInto accepts as
 * IPv4 without a colon), else −1 — no error, no allocation: callers take parseAddrInto for the
 * message.
 * @internal
 */
export function parseIPv4Fast(text: string): number {
  // The allocators' hot path for IPv4 text.
  return parseV4Value(text, text.length);
}

/**
 * The hot path for IPv4: one field at a time, unrolled, no error bookkeeping. Returns the value
 * of a valid dotted quad in s[0, end), or −1 for anything else (IPv6, or a malformed IPv4 that
 * `parseSpan` will then re-parse to say what is wrong). Accepts exactly what `parseV4` accepts
 * (checked by the property tests against the slow oracle).
 */
function parseV4Value(s: string, end: number): number {
  let i = 0;
  let acc = 0;
  for (let field = 0; field < 4; field++) {
    if (i >= end) return -1;
    let d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    let v = d;
    i++;
    if (i < end) {
      d = s.charCodeAt(i) - 48;
      if (d >= 0 && d <= 9) {
        if (v === 0) return -1; // leading zero
        v = v * 10 + d;
        i++;
        if (i < end) {
          d = s.charCodeAt(i) - 48;
          if (d >= 0 && d <= 9) {
            v = v * 10 + d;
            i++;
            if (v > 255) return -1;
          }
        }
      }
    }
    acc = (acc << 8) | v;
    if (field < 3) {
      if (i >= end || s.charCodeAt(i) !== CH_DOT) return -1;
      i++;
    }
  }
  if (i !== end) return -1;
  return acc >>> 0;
}

/** Lowercase hex digit values for char codes 0..127 (the fast path's digits); -1 for anything else. */
const HEX_LOWER = smallInts(128, -1);
for (let c = 0; c < 10; c++) HEX_LOWER[48 + c] = c;
for (let c = 0; c < 6; c++) HEX_LOWER[97 + c] = 10 + c;

/**
 * The hot path for IPv6: lowercase hex groups and at most one `::`, no error bookkeeping. Writes
 * the words of a valid address in s[0, end) and returns true; returns false (leaving `out` in
 * any state) for anything else — upper-case digits, an embedded dotted quad, an IPv4-mapped
 * address, a zone, or a malformed text — which `parseSpan` then parses or rejects with its
 * reason. Accepts a subset of what `parseV6` accepts, with the same words (checked by the
 * property tests against the slow oracle).
 *
 * On the way it notes where the text's `::` stands (lastParsedShape): the canonical-name check
 * that follows the parse of a record name, a release or an allocate then needs only the words
 * and the text's length (canonicalShape), not a comparison character by character.
 */
function parseV6Value(s: string, end: number, out: Uint32Array): boolean {
  const g = groups;
  let n = 0; // groups parsed
  let ellipsis = -1; // group index where `::` stands
  let i = 0;
  let c = s.charCodeAt(0); // the character at i: each one is read once
  if (c === CH_COLON) {
    if (end < 2 || s.charCodeAt(1) !== CH_COLON) return false;
    ellipsis = 0;
    if (end === 2) {
      out[0] = 0;
      out[1] = 0;
      out[2] = 0;
      out[3] = 0;
      rememberParsed6(s, 0x08, out); // `::` for all eight groups
      return true;
    }
    i = 2;
    c = s.charCodeAt(2);
  }
  for (;;) {
    // One group: up to four hex digits from c, unrolled and with the table lookup written out
    // (a loop, or a helper function for the lookup, measured 4-10 % slower over the whole
    // parse; a helper computing the digit from the char code without the table, 1.6-1.9 times
    // slower). A fifth digit needs no test of its own: it is not the colon that must follow.
    let acc = c < 128 ? HEX_LOWER[c]! : -1;
    if (acc < 0) return false;
    let h: number;
    if (++i < end && (c = s.charCodeAt(i)) < 128 && (h = HEX_LOWER[c]!) >= 0) {
      acc = (acc << 4) | h;
      if (++i < end && (c = s.charCodeAt(i)) < 128 && (h = HEX_LOWER[c]!) >= 0) {
        acc = (acc << 4) | h;
        if (++i < end && (c = s.charCodeAt(i)) < 128 && (h = HEX_LOWER[c]!) >= 0) {
          acc = (acc << 4) | h;
          if (++i < end) c = s.charCodeAt(i);
        }
      }
    }
    if (n === 8) return false;
    g[n++] = acc;
    if (i === end) break;
    // then a colon with more after it, or `::`
    if (c !== CH_COLON || ++i === end) return false;
    c = s.charCodeAt(i);
    if (c === CH_COLON) {
      if (ellipsis >= 0) return false;
      ellipsis = n;
      if (++i === end) break;
      c = s.charCodeAt(i);
    }
  }
  let gap = 0; // zero groups the `::` stands for
  if (n < 8) {
    if (ellipsis < 0) return false;
    gap = 8 - n;
    for (let j = n - 1; j >= ellipsis; j--) g[j + gap] = g[j]!;
    for (let j = ellipsis + gap - 1; j >= ellipsis; j--) g[j] = 0;
  } else if (ellipsis >= 0) {
    return false; // `::` standing for no group
  }
  // IPv4-mapped: parseV6 decides what that reads as
  if ((g[0]! | g[1]! | g[2]! | g[3]! | g[4]!) === 0 && g[5] === 0xffff) return false;
  out[0] = (g[0]! << 16) | g[1]!;
  out[1] = (g[2]! << 16) | g[3]!;
  out[2] = (g[4]! << 16) | g[5]!;
  out[3] = (g[6]! << 16) | g[7]!;
  rememberParsed6(s, ellipsis < 0 ? 0 : (ellipsis << 4) | gap, out);
  return true;
}

/**
 * The text parseV6Value last accepted (lowercase digits, at most one `::`) and where its `::`
 * stands, as ZERO_RUN writes a run (start · 16 + length; 0 for none). isCanonical finishes the
 * check from the words (canonicalShape).
 */
let lastParsed6 = '';
let lastParsedShape = 0;
/** The words parseV6Value read from lastParsed6: isCanonical takes the shortcut only for these. */
const lastParsed6Words = new Uint32Array(4);

function rememberParsed6(text: string, shape: number, words: Uint32Array): void {
  lastParsed6 = text;
  lastParsedShape = shape;
  lastParsed6Words[0] = words[0]!;
  lastParsed6Words[1] = words[1]!;
  lastParsed6Words[2] = words[2]!;
  lastParsed6Words[3] = words[3]!;
}

/**
 * Parses address text into a new Uint32Array(4): its family and its value as four u32 words,
 * w0 = bits 127..96 (IPv4 as [0, 0, 0, v4]). Accepts exactly what Go's `netip.ParseAddr`
 * accepts, minus IPv6 zones and IPv6 groups of more than 4 hex digits; IPv4-mapped IPv6 is
 * family 4 with the IPv4 value. Throws InvalidAddressError (`ParseAddr("…"): reason`) for
 * anything else, including non-strings.
 *
 * Each result has words of its own, yours to keep. To parse many addresses, reading each one's
 * words before the next, parseAddrInto writes them into an array you keep instead: no object
 * per call (under Deno, making a typed array costs more than the parse itself).
 */
export function parseAddr(text: unknown): { family: Family; words: Uint32Array } {
  // parseAddrInto into a fresh array: for cold paths and tests (the allocators reuse theirs).
  const words = new Uint32Array(4);
  const family = parseAddrInto(text, words);
  return { family, words };
}

/**
 * parseAddr without the new array: writes the address of `text` into `words[0..3]` (w0 = bits
 * 127..96; IPv4 as [0, 0, 0, v4]) and returns its family. Accepts and refuses what parseAddr
 * does, with the same InvalidAddressError, and leaves `words` as it was then. Use it to parse
 * many addresses with one array of yours (a list, a request's fields), each read before the
 * next parse overwrites it; keep parseAddr where a result must outlive the next parse. Throws
 * InvalidArgumentError unless `words` is a Uint32Array of length 4 or more (a view into a larger
 * one included: only its first four elements are written).
 */
export function parseAddrIntoChecked(text: unknown, words: Uint32Array): Family {
  // isView: a Proxy of a Uint32Array, or Object.create of one, passes instanceof but holds no
  // elements of its own (a Proxy's set traps would run the caller's code mid-write)
  if (!(words instanceof Uint32Array && ArrayBuffer.isView(words) && words.length >= 4)) {
    throw new InvalidArgumentError(`parseAddrInto's words must be a Uint32Array of length 4 or more, got ${wordsKind(words)}`);
  }
  return parseAddrInto(text, words);
}

/** What parseAddrIntoChecked was given as its words, for its refusal. */
function wordsKind(words: unknown): string {
  if (!(words instanceof Uint32Array)) return quoteInput(words);
  if (!ArrayBuffer.isView(words)) return 'an object that only inherits from Uint32Array (a Proxy of one?)';
  return `a Uint32Array of length ${words.length}`;
}

// ---------------------------------------------------------------------------------------------
// Formatting.

/**
 * `DEC[b]` = b in decimal; `DEC_DOT[b]` = the same followed by a dot; `DEC_CODES[b]` = the char
 * codes of `DEC[b]`, the first digit in the low byte, and `DEC_LENGTH[b]` their count.
 */
const DEC: string[] = [];
const DEC_DOT: string[] = [];
const DEC_CODES = smallInts(256, 0);
const DEC_LENGTH = smallInts(256, 0);
for (let b = 0; b < 256; b++) {
  DEC.push(String(b));
  DEC_DOT.push(`${b}.`);
  for (let i = DEC[b]!.length - 1; i >= 0; i--) DEC_CODES[b] = (DEC_CODES[b]! << 8) | DEC[b]!.charCodeAt(i);
  DEC_LENGTH[b] = DEC[b]!.length;
}

/**
 * The text formatIPv4 or formatIPv6 returned last, or that the IPv6 parser or isCanonical last
 * found canonical, unless that address is IPv4-mapped; with the address it is the text of, as
 * parseAddrInto reads it. An allocator formats an address (allocateNext) or checks the text it
 * was given (allocate, release) and at once creates or deletes the record named by it; the store
 * then checks the name, and every other allocator on the store parses it from the event. With
 * this memo none of them reads the text again: isKnownCanonical and isCanonical answer without
 * comparing, parseAddrInto copies four words (≈ 15 % of an allocateNext+release on a
 * MemoryStore for the store's check; for each other allocator on the store, most of what the
 * event costs it). A one-entry memo of a pure fact about the text: any string equal to it is
 * that address, whoever passes it. Starts as a true entry, so it never needs an "empty" state.
 */
let lastCanonical = '0.0.0.0';
let lastCanonicalFamily: Family = 4;
const lastCanonicalWords = new Uint32Array(4);

/** Makes `text`, the canonical text of the address (w0..w3) of `family`, the memo's entry. */
function rememberCanonical(text: string, family: Family, w0: number, w1: number, w2: number, w3: number): void {
  lastCanonical = text;
  lastCanonicalFamily = family;
  const w = lastCanonicalWords;
  w[0] = w0;
  w[1] = w1;
  w[2] = w2;
  w[3] = w3;
}

/**
 * True when `text` equals the last text formatted or found canonical here (IPv4-mapped addresses
 * excepted): then it is the canonical text of an IPv4 address or of an IPv6 address outside
 * ::ffff:0:0/96. False says nothing.
 * @internal
 */
export function isKnownCanonical(text: string): boolean {
  return text === lastCanonical;
}

/** Dotted decimal of the IPv4 address `v` (a u32; the value is taken mod 2^32). @internal */
export function formatIPv4(v: number): string {
  // Why two ways: V8 joins strings with `+` into one flat string only below 13 characters. A
  // longer result is a rope (a ConsString) that its first reader (the store's hash) copies flat,
  // and every later read goes through it; most names of 10.96.0.0/12, the Kubernetes default,
  // have 13 to 15 characters. Those are written as char codes and built flat at once (measured:
  // 35–160 ns less per allocateNext+release there), with no change for shorter names. A shorter
  // name starts from its `a.b.`, made once (highText): two joins instead of three.
  const a = v >>> 24;
  const b = (v >>> 16) & 255;
  const c = (v >>> 8) & 255;
  const d = v & 255;
  const length = DEC_LENGTH[a]! + DEC_LENGTH[b]! + DEC_LENGTH[c]! + DEC_LENGTH[d]! + 3;
  const text = length < 13 ? highText(a, b) + DEC_DOT[c]! + DEC[d]! : flatIPv4(a, b, c, d, length);
  rememberCanonical(text, 4, 0, 0, 0, ((a << 24) | (b << 16) | (c << 8) | d) >>> 0); // the value written, however `v` reads
  return text;
}

/**
 * `HIGH_TEXT[a][b]` = `a.b.`, the first two octets of a dotted quad, or '' until highText first
 * needs it; a row of 256 is made when its first octet is first written (NO_ROW until then).
 */
const NO_ROW: string[] = [];
const HIGH_TEXT: string[][] = Array.from({ length: 256 }, () => NO_ROW);

/**
 * `a.b.`, made once and kept: the names of an allocator share their first two octets (one pair
 * in a /16, sixteen in a /12), so formatIPv4 joins a short name from three strings, not four
 * (measured: 10–15 % less per formatIPv4 of a name under 13 characters). A process that wrote
 * an address in every /16 would keep 65536 of them, 2.1 MB measured; an allocator keeps a few.
 */
function highText(a: number, b: number): string {
  let row = HIGH_TEXT[a]!;
  if (row === NO_ROW) {
    row = Array.from({ length: 256 }, () => '');
    HIGH_TEXT[a] = row;
  }
  const t = row[b]!;
  if (t !== '') return t;
  const text = DEC_DOT[a]! + DEC_DOT[b]!;
  row[b] = text;
  return text;
}

/** The dotted quad a.b.c.d of `length` characters as a flat string (formatIPv4's long names). */
function flatIPv4(a: number, b: number, c: number, d: number, length: number): string {
  const codes = textCodes;
  let at = putOctet(codes, 0, a);
  codes[at++] = 46; // .
  at = putOctet(codes, at, b);
  codes[at++] = 46;
  at = putOctet(codes, at, c);
  codes[at++] = 46;
  putOctet(codes, at, d);
  return textOf(codes, length);
}

/** Writes octet x in decimal at b[at..]; returns the position after it. */
function putOctet(b: number[], at: number, x: number): number {
  const codes = DEC_CODES[x]!;
  b[at++] = codes & 255;
  if (x >= 10) {
    b[at++] = (codes >>> 8) & 255;
    if (x >= 100) b[at++] = codes >>> 16;
  }
  return at;
}

/** Char codes of the lowercase hex digits. */
const HEX_CODE = smallInts(16, 0);
for (let d = 0; d < 16; d++) HEX_CODE[d] = '0123456789abcdef'.charCodeAt(d);

/**
 * `ZERO_RUN[z]`, for the mask z of zero groups (bit i set when group i is 0, group 0 = bits
 * 127..112): the RFC 5952 run written as `::` — the longest run of ≥ 2 zero groups, leftmost on
 * ties — as start · 16 + length, or 0 when there is none (lone zero groups are written `0`).
 *
 *   groups  2001:db8:0:0:1:0:0:0   z = 0b1110_1100   → start 5, length 3   → 2001:db8:0:0:1::
 */
const ZERO_RUN = smallInts(256, 0);
for (let z = 0; z < 256; z++) {
  let best = 0;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (((z >>> i) & 1) === 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && ((z >>> j) & 1) === 1) j++;
    if (j - i > bestLen) {
      best = (i << 4) | (j - i);
      bestLen = j - i;
    }
    i = j;
  }
  ZERO_RUN[z] = best;
}

/** Loads the eight groups of w0..w3 into `groups` and returns the zero run (ZERO_RUN). */
function loadGroups(w0: number, w1: number, w2: number, w3: number): number {
  const g = groups;
  g[0] = w0 >>> 16;
  g[1] = w0 & 0xffff;
  g[2] = w1 >>> 16;
  g[3] = w1 & 0xffff;
  g[4] = w2 >>> 16;
  g[5] = w2 & 0xffff;
  g[6] = w3 >>> 16;
  g[7] = w3 & 0xffff;
  const z =
    (g[0] === 0 ? 1 : 0) |
    (g[1] === 0 ? 2 : 0) |
    (g[2] === 0 ? 4 : 0) |
    (g[3] === 0 ? 8 : 0) |
    (g[4] === 0 ? 16 : 0) |
    (g[5] === 0 ? 32 : 0) |
    (g[6] === 0 ? 64 : 0) |
    (g[7] === 0 ? 128 : 0);
  return ZERO_RUN[z]!;
}

/** Char codes of the text formatIPv4 or formatIPv6 is writing: 39 at most, and the colon written after the last group. */
const textCodes = smallInts(40, 0);

/** Writes group x (0..0xffff) in lowercase hex without leading zeros at b[at..]; returns the position after it. */
function putGroup(b: number[], at: number, x: number): number {
  // A test per digit: writing four codes every time, shifted by a digit count from Math.clz32
  // and without a branch, measured 20 % slower, on groups of random length too.
  if (x >= 0x1000) b[at++] = HEX_CODE[x >>> 12]!;
  if (x >= 0x100) b[at++] = HEX_CODE[(x >>> 8) & 15]!;
  if (x >= 0x10) b[at++] = HEX_CODE[(x >>> 4) & 15]!;
  b[at++] = HEX_CODE[x & 15]!;
  return at;
}

/**
 * The string of the char codes b[0, n), 2 ≤ n ≤ 39, built flat in one step: String.fromCharCode with
 * exactly n arguments is the one way to get a flat string from char codes without an array in
 * between (`apply` or a spread of the codes cost several times more).
 */
// biome-ignore format: one line per text length
function textOf(b: number[], n: number): string {
  switch (n) {
    case 2: return String.fromCharCode(b[0]!, b[1]!);
    case 3: return String.fromCharCode(b[0]!, b[1]!, b[2]!);
    case 4: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!);
    case 5: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!);
    case 6: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!);
    case 7: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!);
    case 8: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!);
    case 9: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!);
    case 10: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!);
    case 11: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!);
    case 12: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!);
    case 13: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!);
    case 14: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!);
    case 15: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!);
    case 16: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!);
    case 17: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!);
    case 18: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!);
    case 19: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!);
    case 20: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!);
    case 21: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!);
    case 22: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!);
    case 23: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!);
    case 24: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!);
    case 25: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!);
    case 26: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!, b[25]!);
    case 27: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!, b[25]!, b[26]!);
    case 28: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!, b[25]!, b[26]!, b[27]!);
    case 29: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!, b[25]!, b[26]!, b[27]!, b[28]!);
    case 30: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!, b[25]!, b[26]!, b[27]!, b[28]!, b[29]!);
    case 31: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!, b[25]!, b[26]!, b[27]!, b[28]!, b[29]!, b[30]!);
    case 32: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!, b[25]!, b[26]!, b[27]!, b[28]!, b[29]!, b[30]!, b[31]!);
    case 33: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!, b[25]!, b[26]!, b[27]!, b[28]!, b[29]!, b[30]!, b[31]!, b[32]!);
    case 34: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!, b[25]!, b[26]!, b[27]!, b[28]!, b[29]!, b[30]!, b[31]!, b[32]!, b[33]!);
    case 35: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!, b[25]!, b[26]!, b[27]!, b[28]!, b[29]!, b[30]!, b[31]!, b[32]!, b[33]!, b[34]!);
    case 36: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!, b[25]!, b[26]!, b[27]!, b[28]!, b[29]!, b[30]!, b[31]!, b[32]!, b[33]!, b[34]!, b[35]!);
    case 37: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!, b[25]!, b[26]!, b[27]!, b[28]!, b[29]!, b[30]!, b[31]!, b[32]!, b[33]!, b[34]!, b[35]!, b[36]!);
    case 38: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!, b[25]!, b[26]!, b[27]!, b[28]!, b[29]!, b[30]!, b[31]!, b[32]!, b[33]!, b[34]!, b[35]!, b[36]!, b[37]!);
    case 39: return String.fromCharCode(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!, b[25]!, b[26]!, b[27]!, b[28]!, b[29]!, b[30]!, b[31]!, b[32]!, b[33]!, b[34]!, b[35]!, b[36]!, b[37]!, b[38]!);
  }
  throw new RangeError(`address text of ${n} characters`); // unreachable: 2 ≤ n ≤ 39
}

/**
 * RFC 5952 text of the IPv6 address with words w0..w3 (w0 = bits 127..96). An IPv4-mapped
 * value is written as plain IPv6 (`::ffff:102:304`), never with a dotted quad: callers that
 * want the IPv4 reading pass family 4 to `formatAddr`.
 * @internal
 */
export function formatIPv6(w0: number, w1: number, w2: number, w3: number): string {
  const text = buildIPv6(w0, w1, w2, w3);
  rememberCanonical6(text);
  return text;
}

/**
 * Remembers `text` in the memo (lastCanonical) with the address `groups` holds, which it is the
 * canonical text of — unless that address is IPv4-mapped (parseAddrInto reads such text as
 * IPv4). Asked of the groups the text was just written or compared from, not of the caller's
 * words again: those may be out of u32 range, or a getter answering anew on each read.
 */
function rememberCanonical6(text: string): void {
  const g = groups;
  if ((g[0]! | g[1]! | g[2]! | g[3]! | g[4]!) === 0 && g[5] === 0xffff) return;
  rememberCanonical(
    text,
    6,
    ((g[0]! << 16) | g[1]!) >>> 0,
    ((g[2]! << 16) | g[3]!) >>> 0,
    ((g[4]! << 16) | g[5]!) >>> 0,
    ((g[6]! << 16) | g[7]!) >>> 0,
  );
}

function buildIPv6(w0: number, w1: number, w2: number, w3: number): string {
  const run = loadGroups(w0, w1, w2, w3);
  const g = groups;
  const b = textCodes;
  //  groups [0, start) · `::` · groups [end, 8), each group written with a colon after it; the
  //  colon after the last group is then cut off, unless the text ends with the `::`
  const start = run === 0 ? 8 : run >>> 4;
  let at = 0;
  for (let i = 0; i < start; i++) {
    at = putGroup(b, at, g[i]!);
    b[at++] = CH_COLON;
  }
  if (start === 8) return textOf(b, at - 1);
  if (start === 0) b[at++] = CH_COLON;
  b[at++] = CH_COLON;
  const end = start + (run & 15);
  if (end === 8) return textOf(b, at);
  for (let i = end; i < 8; i++) {
    at = putGroup(b, at, g[i]!);
    b[at++] = CH_COLON;
  }
  return textOf(b, at - 1);
}

/**
 * Whether a text the IPv6 fast path has just parsed into `words` is canonical, from its length
 * and where its `::` stands (`shape`, as ZERO_RUN writes a run; 0 for none). Its digits are
 * lowercase (the fast path takes no other). With its `::` standing for the run RFC 5952
 * compresses, its groups outside the run are the canonical text's, with the same colons between
 * them; each group is written with at least as many digits as its canonical form, so the text
 * is canonical exactly when it is as long as the canonical text.
 */
function canonicalShape(length: number, shape: number, words: ArrayLike<number>): boolean {
  const run = loadGroups(words[0]!, words[1]!, words[2]!, words[3]!);
  if (run !== shape) return false;
  const g = groups;
  const start = run === 0 ? 8 : run >>> 4;
  const end = run === 0 ? 8 : start + (run & 15);
  // colons: seven between eight groups; with a run, `::` plus those between the groups on each side
  let n = run === 0 ? 7 : 2 + (start > 0 ? start - 1 : 0) + (end < 8 ? 7 - end : 0);
  for (let i = 0; i < 8; i++) {
    if (i === start) i = end;
    if (i === 8) break;
    const x = g[i]!;
    n += x >= 0x1000 ? 4 : x >= 0x100 ? 3 : x >= 0x10 ? 2 : 1;
  }
  return n === length;
}

/**
 * Whether `text` is exactly formatIPv6(w0..w3), compared character by character without
 * building the canonical text.
 */
function isCanonical6(text: string, w0: number, w1: number, w2: number, w3: number): boolean {
  const run = loadGroups(w0, w1, w2, w3);
  const g = groups;
  const start = run === 0 ? 8 : run >>> 4;
  const end = run === 0 ? 8 : start + (run & 15);
  let at = 0;
  for (let i = 0; i < 8; i++) {
    if (i === start) {
      if (text.charCodeAt(at) !== CH_COLON || text.charCodeAt(at + 1) !== CH_COLON) return false;
      at += 2;
      i = end - 1;
      continue;
    }
    if (i > 0 && i !== end) {
      if (text.charCodeAt(at) !== CH_COLON) return false;
      at++;
    }
    const x = g[i]!;
    //  the group's digits, no leading zeros: 0 → "0", 0x0db8 → "db8"
    for (let shift = x >= 0x1000 ? 12 : x >= 0x100 ? 8 : x >= 0x10 ? 4 : 0; shift >= 0; shift -= 4) {
      if (text.charCodeAt(at++) !== HEX_CODE[(x >>> shift) & 15]) return false;
    }
  }
  return at === text.length;
}

/**
 * Whether `text`, which parseAddrInto has just parsed into `words` as `family`, is already the
 * canonical text (what formatAddr writes), checked without formatting. IPv4 text without a
 * colon that parses is canonical (the parser takes only plain dotted quads without leading
 * zeros); IPv4 read from IPv4-mapped IPv6 text never is.
 * @internal
 */
export function isCanonical(text: string, family: Family, words: ArrayLike<number>): boolean {
  if (family === 4) return text.indexOf(':') < 0;
  if (text === lastCanonical) return true;
  // The shortcut (shape and length) holds for the words the parser read from this very text;
  // any other words are compared character by character. Either way the groups then hold the
  // address `text` is the canonical text of, which is what the memo keeps.
  const w = lastParsed6Words;
  if (text === lastParsed6 && words[0] === w[0] && words[1] === w[1] && words[2] === w[2] && words[3] === w[3]) {
    if (!canonicalShape(text.length, lastParsedShape, words)) return false;
  } else if (!isCanonical6(text, words[0]!, words[1]!, words[2]!, words[3]!)) {
    return false;
  }
  rememberCanonical6(text);
  return true;
}

/**
 * The canonical text of `text`, which parseAddrInto has just parsed into `words` as `family`:
 * `text` itself when it is canonical already (isCanonical: no string is built), else formatted.
 * @internal
 */
export function canonicalOf(text: string, family: Family, words: ArrayLike<number>): string {
  return isCanonical(text, family, words) ? text : formatAddr(family, words);
}

/**
 * The canonical text of `text` when it is an address of family `fam`, its words left in `out`;
 * null for an address of the other family. Malformed text throws InvalidAddressError. A plain
 * dotted quad (parseIPv4Fast) is canonical as written: no general parse.
 * @internal
 */
export function parseCanonical(text: string, fam: Family, out: Uint32Array): string | null {
  const v4 = fam === 4 && typeof text === 'string' ? parseIPv4Fast(text) : -1;
  if (v4 >= 0) {
    out[0] = 0;
    out[1] = 0;
    out[2] = 0;
    out[3] = v4;
    return text;
  }
  const family = parseAddrInto(text, out);
  return family === fam ? canonicalOf(text, family, out) : null;
}

/**
 * Canonical text of an address: `formatIPv4(words[3])` for family 4, `formatIPv6(...words)` for
 * family 6. Throws InvalidArgumentError for any other family. On the allocation path: it trusts
 * its words (the package's own, parsed or computed); `ipallocator/core` exports the checked
 * variant, formatAddrChecked. @internal
 */
export function formatAddr(family: Family, words: ArrayLike<number>): string {
  if (typeof words !== 'object' || words === null)
    throw new InvalidArgumentError(`address words must be an array of four numbers, got ${quoteInput(words)}`);
  if (family === 4) return formatIPv4(words[3]!);
  if (family === 6) return formatIPv6(words[0]!, words[1]!, words[2]!, words[3]!);
  throw new InvalidArgumentError(`address family must be 4 or 6, got ${String(family)}`);
}

const canonicalScratch = new Uint32Array(4);

/**
 * The canonical text of an address text (`010.1.1.1` is rejected, not canonicalised; upper-case
 * and uncompressed IPv6 are rewritten; IPv4-mapped IPv6 becomes dotted IPv4).
 * Throws InvalidAddressError like `parseAddrInto`.
 */
export function canonicalAddr(text: unknown): string {
  const w = canonicalScratch;
  const family = parseAddrInto(text, w);
  return family === 4 ? formatIPv4(w[3]!) : formatIPv6(w[0]!, w[1]!, w[2]!, w[3]!);
}

// ---------------------------------------------------------------------------------------------
// Prefixes.

const R_P_NO_SLASH = "no '/'";
const R_P_TOO_LONG = 'prefix string too long (a prefix has at most 49 characters)';
const R_P_ZONE = 'IPv6 zones cannot be present in a prefix';
const R_P_OUT_OF_RANGE_4 = 'prefix length out of range (0..32 for IPv4)';
const R_P_OUT_OF_RANGE_6 = 'prefix length out of range (0..128 for IPv6)';
const R_P_MAPPED = 'IPv4-mapped IPv6 prefix is ambiguous; write it as an IPv4 prefix (e.g. 10.0.0.0/8) or a plain IPv6 prefix';

/**
 * Parses `addr/bits` as Go's `netip.ParsePrefix` does: the address as in `parseAddrInto`, then a
 * decimal length with no sign, no leading zeros and no spaces, 0..32 (IPv4) or 0..128 (IPv6).
 * Host bits may be set: `words` are returned as written, not masked (the caller masks).
 * IPv4-mapped IPv6 prefixes are rejected as ambiguous, zones are rejected.
 * Throws InvalidCIDRError (`ParsePrefix("…"): reason`) for anything else, including non-strings.
 */
export function parsePrefix(text: unknown): { family: Family; words: Uint32Array; bits: number } {
  if (typeof text !== 'string') throw new InvalidCIDRError(text, `${R_NOT_STRING}, got ${typeName(text)}`);
  const n = text.length;
  if (n === 0) throw new InvalidCIDRError(text, R_EMPTY);
  if (n > MAX_PREFIX_TEXT) throw new InvalidCIDRError(text, R_P_TOO_LONG);
  const slash = text.lastIndexOf('/');
  if (slash < 0) throw new InvalidCIDRError(text, R_P_NO_SLASH);

  const words = new Uint32Array(4);
  let f = 0;
  if (slash === 0) {
    fail(R_EMPTY, -1, 0);
  } else if (slash > MAX_ADDR_TEXT) {
    fail(R_TOO_LONG, -1, slash);
  } else {
    const v4 = parseV4Value(text, slash);
    if (v4 >= 0) {
      putV4(words, v4);
      f = 4;
    } else f = parseSpan(text, 0, slash, words);
  }
  if (f === 0) {
    if (failReason === R_ZONE) throw new InvalidCIDRError(text, R_P_ZONE);
    const addr = text.slice(0, slash);
    throw new InvalidCIDRError(text, new InvalidAddressError(addr, failText(addr)).message);
  }

  // Bits: 1..3 decimal digits, no leading zero unless the length is exactly 0.
  const bitsLen = n - slash - 1;
  let bits = 0;
  let ok = bitsLen > 0 && bitsLen <= 3 && !(bitsLen > 1 && text.charCodeAt(slash + 1) === 48);
  for (let i = slash + 1; ok && i < n; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) ok = false;
    else bits = bits * 10 + d;
  }
  if (!ok) {
    // Go reports an over-long run of digits (`/1000`) as out of range, anything else as bad bits.
    if (bitsLen > 3 && isDecimalNoLeadingZero(text, slash + 1, n)) bits = Infinity;
    else throw new InvalidCIDRError(text, `bad bits after slash: ${quoteText(text.slice(slash + 1))}`);
  }

  if (f === FAM_MAPPED) throw new InvalidCIDRError(text, R_P_MAPPED);
  const family: Family = f === FAM_V6 ? 6 : 4;
  if (bits > (family === 4 ? 32 : 128)) {
    throw new InvalidCIDRError(text, family === 4 ? R_P_OUT_OF_RANGE_4 : R_P_OUT_OF_RANGE_6);
  }
  return { family, words, bits };
}

function isDecimalNoLeadingZero(s: string, start: number, end: number): boolean {
  if (s.charCodeAt(start) === 48) return false;
  for (let i = start; i < end; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
  }
  return true;
}

/**
 * `addr/bits` with the address in canonical text (words are written as given, not masked). For
 * the package's own callers, which pass a family, words and a length they made: the checked
 * formatPrefix of `ipallocator/core` is formatPrefixChecked. @internal
 */
export function formatPrefix(family: Family, words: ArrayLike<number>, bits: number): string {
  return `${formatAddr(family, words)}/${bits}`;
}

// ---------------------------------------------------------------------------------------------
// The checked formatters of `ipallocator/core`.
//
// The package's own callers format words they parsed or computed, once per allocation: formatAddr
// and formatPrefix above trust them. A caller of the entry point may pass anything — a parseAddr
// result whole, three words, NaN, an IPv4 value in the wrong word — and must get an error saying
// how to call, not the text of another address. These read each argument once (a getter or Proxy
// answers what was checked) and format the values they checked.

const ADDR_CALL = 'for a = parseAddr(text), call formatAddr(a.family, a.words)';
const PREFIX_CALL = 'for p = parsePrefix(text), call formatPrefix(p.family, p.words, p.bits)';

/**
 * `family` when it is 4 or 6; InvalidArgumentError otherwise, saying how to call `fn` when an
 * object was passed (`takes`: what it takes instead).
 */
function checkFamily(family: unknown, fn: string, takes: string, call: string): Family {
  if (family === 4 || family === 6) return family;
  // the parse result given whole is the likely mistake (from JavaScript: TypeScript refuses it)
  const hint = typeof family === 'object' && family !== null ? `: ${fn} takes ${takes}; ${call}` : '';
  throw new InvalidArgumentError(`${fn}'s family must be 4 or 6, got ${quoteInput(family)}${hint}`);
}

/**
 * The four words of `words`, each read once (a getter or Proxy answers what was checked): an
 * array-like of exactly four integers in [0, 2^32), w0 = bits 127..96, and for family 4 the IPv4
 * value in w3 with w0..w2 zero (as parseAddr gives it). InvalidArgumentError otherwise, ending
 * with how to call `fn`.
 */
function readAddrWords(family: Family, words: unknown, fn: string, call: string): number[] {
  const shape = 'four integers in [0, 2^32), w0 = bits 127..96 (IPv4: [0, 0, 0, v])';
  if (typeof words !== 'object' || words === null || readMember(words, 'length', 'words') !== 4) {
    throw new InvalidArgumentError(`${fn}'s words must be ${shape}, got ${quoteInput(words)}; ${call}`);
  }
  const w = [0, 0, 0, 0]; // not shared: a getter of `words` may call back in
  for (let i = 0; i < 4; i++) {
    const x = readMember(words, i, 'words');
    if (typeof x !== 'number' || x >>> 0 !== x) {
      throw new InvalidArgumentError(`${fn}'s words[${i}] must be an integer in [0, 2^32), got ${quoteInput(x)}; ${call}`);
    }
    w[i] = x;
  }
  for (let i = 0; family === 4 && i < 3; i++) {
    if (w[i] !== 0) {
      throw new InvalidArgumentError(
        `${fn} of family 4 takes the IPv4 value in words[3] and 0 in words[0..2], got words[${i}] = ${w[i]} (an IPv6 address is family 6); ${call}`,
      );
    }
  }
  return w;
}

/**
 * Canonical text of an address given as its family and four u32 words (dotted decimal; RFC 5952
 * for IPv6): the inverse of parseAddr, `formatAddr(a.family, a.words)`. Words are big-endian,
 * w0 = bits 127..96; an IPv4 address is [0, 0, 0, v] with family 4 (family 6 writes the same
 * words as `::v`). Throws InvalidArgumentError for a family other than 4 or 6, words that are not
 * four integers in [0, 2^32), and family 4 with w0..w2 not zero.
 */
export function formatAddrChecked(family: Family, words: ArrayLike<number>): string {
  const f = checkFamily(family, 'formatAddr', 'the two fields of an address, not an address object', ADDR_CALL);
  const w = readAddrWords(f, words, 'formatAddr', ADDR_CALL);
  return f === 4 ? formatIPv4(w[3]!) : formatIPv6(w[0]!, w[1]!, w[2]!, w[3]!);
}

/**
 * `addr/bits` with the address in canonical text, as formatAddr writes it (words are written as
 * given, not masked): the inverse of parsePrefix, `formatPrefix(p.family, p.words, p.bits)`.
 * Throws InvalidArgumentError for a family other than 4 or 6 (for parsePrefix's result passed
 * whole, which plain JavaScript lets through, saying how to spread it), bits outside 0..32 /
 * 0..128, and words as formatAddr refuses them.
 */
export function formatPrefixChecked(family: Family, words: ArrayLike<number>, bits: number): string {
  const f = checkFamily(family, 'formatPrefix', 'the three fields of a prefix, not a prefix object', PREFIX_CALL);
  const max = f === 4 ? 32 : 128;
  if (!Number.isInteger(bits) || bits < 0 || bits > max) {
    throw new InvalidArgumentError(`prefix length must be an integer in 0..${max}, got ${quoteInput(bits)}`);
  }
  const w = readAddrWords(f, words, 'formatPrefix', PREFIX_CALL);
  return `${f === 4 ? formatIPv4(w[3]!) : formatIPv6(w[0]!, w[1]!, w[2]!, w[3]!)}/${bits}`;
}

/** Converts four big-endian u32 words to a BigInt. @internal */
export function wordsToBig(w: ArrayLike<number>): bigint {
  return (BigInt(w[0]!) << 96n) | (BigInt(w[1]!) << 64n) | (BigInt(w[2]!) << 32n) | BigInt(w[3]!);
}
