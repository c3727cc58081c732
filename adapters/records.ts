// IPAddress records as the allocators read and write them: the two labels upstream writes on
// every record, how a record's name is read back as an address, and what a valid record and
// owner (parentRef) are.
import { formatAddr, parseAddrInto, parseIPv4Fast, type Family } from './address.ts';
import { InvalidAddressError, InvalidArgumentError, InvalidRecordError, quoteInput } from './errors.ts';
import { CONTROLLER_NAME, LABEL_IP_FAMILY, LABEL_MANAGED_BY, type IPAddressRecord } from './store.ts';
import type { IPFamily, ParentRef } from './types.ts';

const LABELS_V4: Readonly<Record<string, string>> = Object.freeze({ [LABEL_IP_FAMILY]: 'IPv4', [LABEL_MANAGED_BY]: CONTROLLER_NAME });
const LABELS_V6: Readonly<Record<string, string>> = Object.freeze({ [LABEL_IP_FAMILY]: 'IPv6', [LABEL_MANAGED_BY]: CONTROLLER_NAME });

/** The two labels upstream writes, as one frozen object per family (shared by every record). */
export function labelsFor(family: IPFamily): Readonly<Record<string, string>> {
  return family === 'IPv4' ? LABELS_V4 : LABELS_V6;
}

/** True when the record carries both allocator labels for `family` (upstream's list selector). */
export function hasAllocatorLabels(record: IPAddressRecord, family: IPFamily): boolean {
  return record.labels[LABEL_IP_FAMILY] === family && record.labels[LABEL_MANAGED_BY] === CONTROLLER_NAME;
}

/**
 * Parses a record name the way upstream Used() does (`netip.ParseAddr`, strict) into `out`.
 * Returns 4 or 6, or 0 when the name is not an address. IPv4-mapped text (`::ffff:1.2.3.4`) is
 * an IPv6 address here ([0, 0, 0xffff, v4]): netip keeps it in the IPv6 family, so an IPv4
 * prefix does not contain it.
 */
export function parseRecordName(name: string, out: Uint32Array): 0 | Family {
  let family: Family;
  try {
    family = parseAddrInto(name, out);
  } catch {
    return 0;
  }
  if (family === 4 && name.indexOf(':') >= 0) {
    out[2] = 0xffff;
    return 6;
  }
  return family;
}

// ── Validation: what kube-apiserver refuses, refused here too ───────────────────────────────
//
// The rules follow upstream `pkg/apis/networking/validation` (ValidateIPAddress,
// ValidateIPAddressName, validateIPAddressParentReference) with the strict address check of
// apimachinery `pkg/util/validation/ip.go` IsValidIP: the name is an address, without leading
// zeros, not IPv4-mapped IPv6, in canonical form.

/** Upstream IsDNS1123Subdomain: lower-case alphanumerics, '-' and '.', at most 253 characters. */
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const PARENT_REF_KEYS = ['group', 'resource', 'namespace', 'name'] as const;

/** True for `{}`-like objects: not arrays, dates, maps or class instances. */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Upstream IsValidPathSegmentName: the problems of a name used as one URL path segment. */
function pathSegmentProblems(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  const out: string[] = [];
  if (value.includes('/')) out.push("may not contain '/'");
  if (value.includes('%')) out.push("may not contain '%'");
  return out;
}

/**
 * Every problem of a parentRef (`field` is its path, e.g. `spec.parentRef`), as upstream
 * validateIPAddressParentReference words them; empty when it is valid.
 */
function parentRefProblems(ref: unknown, field: string): string[] {
  if (!isPlainObject(ref)) return [`${field}: Invalid value: ${quoteInput(ref)}: must be an object {group?, resource, namespace?, name}`];
  const out: string[] = [];
  for (const key of Object.keys(ref)) {
    if (!(PARENT_REF_KEYS as readonly string[]).includes(key)) out.push(`${field}.${key}: Unknown field`);
  }
  for (const sym of Object.getOwnPropertySymbols(ref)) out.push(`${field}[${String(sym)}]: Unknown field`);
  for (const key of PARENT_REF_KEYS) {
    const v = ref[key];
    const optional = key === 'group' || key === 'namespace';
    if (v === undefined || v === '') {
      if (!optional) out.push(`${field}.${key}: Required value`);
      continue;
    }
    if (typeof v !== 'string') {
      out.push(`${field}.${key}: Invalid value: ${quoteInput(v)}: must be a string`);
      continue;
    }
    const problems =
      key === 'group'
        ? v.length <= 253 && DNS1123_SUBDOMAIN.test(v)
          ? []
          : ["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"]
        : pathSegmentProblems(v);
    for (const p of problems) out.push(`${field}.${key}: Invalid value: ${quoteInput(v)}: ${p}`);
  }
  return out;
}

/**
 * Checks an allocator call's `owner` and returns the parentRef to write: `null` when no owner is
 * given (undefined or null), else the owner itself. An owner must have the shape of upstream's
 * ParentReference — `{group?, resource, namespace?, name}`, strings only, `resource` and `name`
 * non-empty, nothing else — as kube-apiserver checks it (`pkg/apis/networking/validation`
 * validateIPAddressParentReference); anything else (`'web'`, `42`, a symbol, an array, an
 * unknown key) throws InvalidArgumentError quoting what is wrong, before anything is written.
 */
export function checkParentRef(owner: unknown): ParentRef | null {
  if (owner === undefined || owner === null) return null;
  const problems = parentRefProblems(owner, 'owner');
  if (problems.length > 0) throw new InvalidArgumentError(problems.join('; '));
  return owner as ParentRef;
}

const nameWords = new Uint32Array(4);
const nameGroups = new Uint16Array(8);

/**
 * True when `text` is an IPv6 address (not IPv4-mapped) written exactly as Go's netip and
 * formatIPv6 write it (RFC 5952: lower-case hex without leading zeros, the longest run of two or
 * more zero groups as `::`, leftmost on ties, no dotted quad). One pass over the text, no
 * allocation: parsing and formatting to compare cost ten times more, on every IPv6 create.
 * false says nothing about why; nameProblems finds the reason.
 */
function isCanonicalIPv6(text: string): boolean {
  const n = text.length;
  if (n < 2 || n > 39) return false;
  const g = nameGroups;
  let p = 0;
  let count = 0;
  let gap = -1; // index of the group where "::" stands
  if (text.charCodeAt(0) === 58 && text.charCodeAt(1) === 58) {
    gap = 0;
    p = 2;
  }
  while (p < n) {
    const start = p;
    let v = 0;
    for (; p < n; p++) {
      const c = text.charCodeAt(p);
      if (c >= 48 && c <= 57) v = v * 16 + (c - 48);
      else if (c >= 97 && c <= 102) v = v * 16 + (c - 87);
      else break;
    }
    const digits = p - start;
    if (digits === 0 || digits > 4 || (digits > 1 && text.charCodeAt(start) === 48) || count === 8) return false;
    g[count++] = v;
    if (p === n) break;
    if (text.charCodeAt(p) !== 58) return false; // only ':' separates groups
    p++;
    if (p === n) return false; // a trailing single ':'
    if (text.charCodeAt(p) === 58) {
      if (gap >= 0) return false; // a second "::"
      gap = count;
      p++;
    }
  }
  let gapLen = 0;
  if (gap < 0) {
    if (count !== 8) return false;
  } else {
    gapLen = 8 - count;
    if (gapLen < 1) return false;
    for (let i = count - 1; i >= gap; i--) g[i + gapLen] = g[i]!;
    for (let i = gap; i < gap + gapLen; i++) g[i] = 0;
  }
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) return false; // IPv4-mapped
  // The run formatIPv6 compresses: the longest of two or more zero groups, leftmost on ties.
  let zStart = -1;
  let zLen = 1;
  for (let i = 0; i < 8; i++) {
    if (g[i] !== 0) continue;
    let j = i + 1;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > zLen) {
      zStart = i;
      zLen = j - i;
    }
    i = j;
  }
  return gap < 0 ? zStart === -1 : zStart === gap && zLen === gapLen;
}

/** True when `name` is an address in canonical text (not IPv4-mapped); false for anything else. */
function isCanonicalAddress(name: string): boolean {
  return parseIPv4Fast(name) >= 0 || isCanonicalIPv6(name);
}

/** The problems of a record name, as upstream ValidateIPAddressName with the strict IsValidIP. */
function nameProblems(name: unknown): string[] {
  if (name === undefined || name === '') return ['metadata.name: Required value'];
  if (typeof name !== 'string') return [`metadata.name: Invalid value: ${quoteInput(name)}: must be a string`];
  if (isCanonicalAddress(name)) return [];
  let family: Family;
  try {
    family = parseAddrInto(name, nameWords);
  } catch (e) {
    const reason = e instanceof InvalidAddressError ? ` (${e.reason})` : '';
    return [`metadata.name: Invalid value: ${quoteInput(name)}: must be a valid IP address, e.g. 10.9.8.7 or 2001:db8::ffff${reason}`];
  }
  if (family === 4) return [`metadata.name: Invalid value: ${quoteInput(name)}: must not be an IPv4-mapped IPv6 address`];
  const canonical = formatAddr(6, nameWords);
  return [`metadata.name: Invalid value: ${quoteInput(name)}: must be in canonical form (${JSON.stringify(canonical)})`];
}

/** The problems of a record's labels: a plain object whose values are strings (absent = none). */
function labelProblems(labels: unknown): string[] {
  if (labels === undefined) return [];
  if (!isPlainObject(labels)) return [`metadata.labels: Invalid value: ${quoteInput(labels)}: must be an object of string values`];
  const out: string[] = [];
  for (const key of Object.keys(labels)) {
    const v = labels[key];
    if (typeof v !== 'string') out.push(`metadata.labels[${JSON.stringify(key)}]: Invalid value: ${quoteInput(v)}: must be a string`);
  }
  return out;
}

/**
 * Checks a record at a store's door, as kube-apiserver validates an IPAddress (HTTP 422
 * Invalid), and throws InvalidRecordError listing every problem; returns normally when the
 * record may be stored.
 * - `name`: an address in canonical form (`10.0.0.1`, `2001:db8::1`; not `010.0.0.1`,
 *   `2001:DB8::1`, `::ffff:10.0.0.1`, a CIDR or a zone).
 * - `labels`: absent, or a plain object of string values.
 * - `parentRef`: the ParentReference shape (see checkParentRef), or null. kube-apiserver
 *   requires a parentRef (`spec.parentRef: Required value`), but upstream's allocator writes
 *   none from its owner-less entry points (`Allocate(ip)`, `AllocateNext()`), which its tests run
 *   against a fake client that stores them; our allocators write null there too, so an embedded
 *   store accepts null (and absent) as "no owner". A KubernetesStore's server still refuses it.
 */
export function validateRecord(record: unknown): void {
  // The allocators' own records (their shared label set, no owner) need only the name checked:
  // they are most of a store's writes.
  if (typeof record === 'object' && record !== null) {
    const r = record as IPAddressRecord;
    const name = r.name;
    if (typeof name === 'string' && (r.labels === LABELS_V4 || r.labels === LABELS_V6) && r.parentRef === null && isCanonicalAddress(name)) return;
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    throw new InvalidRecordError(record, ['a record must be an object {name, labels, parentRef}']);
  }
  const { name, labels, parentRef: ref } = record as Record<string, unknown>;
  const problems = nameProblems(name);
  if (labels !== LABELS_V4 && labels !== LABELS_V6) problems.push(...labelProblems(labels)); // the allocators' own: valid
  if (ref !== null && ref !== undefined) problems.push(...parentRefProblems(ref, 'spec.parentRef'));
  if (problems.length > 0) throw new InvalidRecordError(name, problems);
}
