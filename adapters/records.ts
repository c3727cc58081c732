// IPAddress records as the allocators read and write them: the two labels upstream writes on
// every record, how a record's name is read back as an address, and what a valid record and
// owner (parentRef) are.
import { canonicalOf, formatAddr, isCanonical, parseAddrInto, parseIPv4Fast, type Family, isKnownCanonical } from './address.ts';
import { type IPAllocatorError, InvalidAddressError, InvalidArgumentError, InvalidRecordError } from './errors.ts';
import { isPlainObject, memberName, readMember, unreadableInput } from './input.ts';
import { classOf, quoteInput, quoteText } from './quote.ts';
import { dns1123SubdomainProblems, labelProblems } from './label-rules.ts';
import {
  CACHE_LEAVES_OUT,
  CONTROLLER_NAME,
  LABEL_IP_FAMILY,
  LABEL_MANAGED_BY,
  cacheList,
  type IPAddressRecord,
  type Store,
  type StoreCache,
  type ParentRef,
} from './store.ts';
import type { IPFamily } from './types.ts';

const LABELS_V4: Readonly<Record<string, string>> = Object.freeze({ [LABEL_IP_FAMILY]: 'IPv4', [LABEL_MANAGED_BY]: CONTROLLER_NAME });
const LABELS_V6: Readonly<Record<string, string>> = Object.freeze({ [LABEL_IP_FAMILY]: 'IPv6', [LABEL_MANAGED_BY]: CONTROLLER_NAME });

/**
 * The same two labels as the allocators write them: objects only the allocators hold (no record
 * carries them; a store keeps labelsFor()'s instead). A MemoryStore knows an allocator's own
 * write by them, and leaves the record it answers to that write unfrozen: the allocator drops
 * the answer, and its allocation path pays for no freeze. Any other write is answered frozen.
 */
const WRITE_V4: Readonly<Record<string, string>> = Object.freeze({ [LABEL_IP_FAMILY]: 'IPv4', [LABEL_MANAGED_BY]: CONTROLLER_NAME });
const WRITE_V6: Readonly<Record<string, string>> = Object.freeze({ [LABEL_IP_FAMILY]: 'IPv6', [LABEL_MANAGED_BY]: CONTROLLER_NAME });

/** The two labels upstream writes, as one frozen object per family (shared by every record). @internal */
export function labelsFor(family: IPFamily): Readonly<Record<string, string>> {
  return family === 'IPv4' ? LABELS_V4 : LABELS_V6;
}

/**
 * forEach of the allocators over a store (upstream ForEach): `fn` with the address of each record
 * of `family`'s labels in `cache` — in any range or none —, until `stopped()` (the callback
 * destroyed the allocator). Upstream passes ParseIPSloppy(name), an address, nil for a name that
 * is none; here the address's canonical text (the name itself, as kube-apiserver stores names),
 * and a name that is no address as netip.ParseAddr reads one (a store of your own) is skipped.
 * @internal
 */
export function forEachLabelledAddress(cache: StoreCache, family: IPFamily, stopped: () => boolean, fn: (ip: string) => void): void {
  const w = nameWords;
  for (const r of cacheList(cache, labelsFor(family))) {
    if (stopped()) return;
    const name: unknown = r.name;
    let parsed: Family;
    try {
      parsed = parseAddrInto(name, w);
    } catch {
      continue;
    }
    fn(canonicalOf(name as string, parsed, w));
  }
}

/** The labels an allocator writes its records with (see WRITE_V4): the same as labelsFor(family). @internal */
export function writeLabelsFor(family: IPFamily): Readonly<Record<string, string>> {
  return family === 'IPv4' ? WRITE_V4 : WRITE_V6;
}

/**
 * For the labels of an allocator's write (writeLabelsFor's, by identity): the set a store keeps,
 * labelsFor()'s. Undefined for any other labels.
 * @internal
 */
export function storedLabelsOf(labels: unknown): Readonly<Record<string, string>> | undefined {
  return labels === WRITE_V4 ? LABELS_V4 : labels === WRITE_V6 ? LABELS_V6 : undefined;
}

/**
 * True for the label sets labelsFor() and writeLabelsFor() return (known by identity): frozen
 * and valid, so a store keeps and accepts them as they are (a MemoryStore keeps labelsFor()'s in
 * place of writeLabelsFor()'s: storedLabelsOf).
 * @internal
 */
export function isAllocatorLabelSet(labels: unknown): boolean {
  // By identity rather than Object.isFrozen: that is a call into the runtime (≈ 20 ns on
  // Node 20), paid on every record otherwise. The stored sets first: a MemoryStore checks those.
  return labels === LABELS_V4 || labels === LABELS_V6 || labels === WRITE_V4 || labels === WRITE_V6;
}

/** True when the record carries both allocator labels for `family` (upstream's list selector). @internal */
export function hasAllocatorLabels(record: IPAddressRecord, family: IPFamily): boolean {
  const labels = record.labels;
  // The sets a store keeps for the allocators' writes, by identity first: reading the two labels
  // by name cost about a tenth of an allocateNext + release, where this check runs on each
  // event of an allocator's own records.
  if (labels === LABELS_V4 || labels === LABELS_V6) return labels === (family === 'IPv4' ? LABELS_V4 : LABELS_V6);
  // a record without labels (a store in plain JavaScript) has none of ours
  return labels != null && labels[LABEL_IP_FAMILY] === family && labels[LABEL_MANAGED_BY] === CONTROLLER_NAME;
}

/**
 * How an add event changes the count of `family`'s labelled records (upstream Used(), kept in
 * O(1) from the event): a new name counts when labelled; an update (`previous` set) only when it
 * adds or drops the labels. A delete takes off 1 when hasAllocatorLabels(record).
 * @internal
 */
export function labelledChange(record: IPAddressRecord, previous: IPAddressRecord | undefined, family: IPFamily): -1 | 0 | 1 {
  const labelled = hasAllocatorLabels(record, family);
  const was = previous !== undefined && hasAllocatorLabels(previous, family);
  return labelled === was ? 0 : labelled ? 1 : -1;
}

/**
 * Parses a record name the way upstream Used() does (`netip.ParseAddr`, strict) into `out`.
 * Returns 4 or 6, or 0 when the name is not an address. IPv4-mapped text (`::ffff:1.2.3.4`) is
 * an IPv6 address here ([0, 0, 0xffff, v4]): netip keeps it in the IPv6 family, so an IPv4
 * prefix does not contain it.
 * @internal
 */
export function parseRecordName(name: string, out: Uint32Array): 0 | Family {
  if (name !== lastName) {
    lastFamily = parseName(name, lastWords);
    lastName = name;
  }
  out[0] = lastWords[0]!;
  out[1] = lastWords[1]!;
  out[2] = lastWords[2]!;
  out[3] = lastWords[3]!;
  return lastFamily;
}

/**
 * The last name parseRecordName read, and what it found. Every allocator on a store hears each
 * event in turn (a MetaAllocator's ranges, a DualStack's two families, allocators sharing a
 * store), and each one that did not write the record parses its name: with this memo the first
 * parses and the others copy four words. Sound because the answer depends on the text alone.
 * (A name this process has just formatted or checked, parseAddrInto answers from its own memo;
 * this one serves the rest: names written by others, such as a KubernetesStore's events.)
 */
let lastName: unknown = {};
let lastFamily: 0 | Family = 0;
const lastWords = new Uint32Array(4);

function parseName(name: string, out: Uint32Array): 0 | Family {
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

const PARENT_REF_KEYS = ['group', 'resource', 'namespace', 'name'] as const;

/** The problem of a parentRef that is not an object of fields (a string, a number, an array), quoted by quoteInput, which reads nothing that can throw. */
function notAParentRef(ref: unknown, field: string): string {
  return `${field}: Invalid value: ${quoteInput(ref)}: must be an object {group?, resource, namespace?, name}`;
}

const REQUIRED_PARENT_REF_KEYS = ['resource', 'name'] as const;
/** An owner that fits the shape: what every refusal of an owner ends with. */
const OWNER_EXAMPLE = "e.g. { group: '', resource: 'services', namespace: 'default', name: 'web' }";
/** What an owner's refusal ends with, unless it said the shape already: the shape, and the example. */
const OWNER_SHAPE = `an owner is {group?, resource, namespace?, name}, ${OWNER_EXAMPLE}`;
/** Said when an owner's required field is somewhere other than its own enumerable fields, or it has none. */
const OWN_FIELDS_ONLY = "only an owner's own enumerable fields are read";

/**
 * Why the fields `hidden` (present on the owner, `in`, but not as own enumerable fields) do not
 * count: they are on its prototype or not enumerable.
 */
function hiddenFields(hidden: readonly string[]): string {
  const named = hidden.length === 1 ? hidden[0] : `${hidden.slice(0, -1).join(', ')} and ${hidden[hidden.length - 1]}`;
  return `its ${named} ${hidden.length === 1 ? 'is' : 'are'} inherited, as from Object.create or a class's getters, or not enumerable`;
}

/**
 * The problem of an owner that is an object with no own enumerable fields and is not plain (a
 * Date, an Object.create(base), an instance of a class whose fields are getters): `hidden`
 * lists the required fields it has elsewhere (hiddenFields).
 */
function noOwnFields(kind: string, field: string, hidden: readonly string[]): string {
  const missing = REQUIRED_PARENT_REF_KEYS.filter((key) => !hidden.includes(key));
  const why: string[] = [];
  if (hidden.length > 0) why.push(hiddenFields(hidden));
  if (missing.length > 0) why.push(`${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} required`);
  return `${field}: Invalid value: ${kind}: ${OWN_FIELDS_ONLY}, and it has none: ${why.join(', and ')}`;
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
 * A record's labels or parentRef that is an object but not a plain one (a Map, an instance of a
 * class of yours, an Object.create(base)): `what` says what it must be. A store keeps a frozen
 * copy of a plain object's own fields, and keeps anything else as given (a copy of a Map would
 * be `{}`), so it refuses it; an owner given to an allocator is copied for you instead
 * (checkParentRef).
 */
function notPlainObject(o: object, field: string, what: string): string {
  return `${field}: Invalid value: ${classOf(o)}: must be a plain object ${what} (an object literal): only a plain object's own fields are copied`;
}

/**
 * Every problem of a parentRef (`field` is its path, e.g. `spec.parentRef`), as upstream
 * validateIPAddressParentReference words them; empty when it is valid.
 */
function parentRefProblems(ref: unknown, field: string): string[] {
  if (!isPlainObject(ref)) {
    const isObject = typeof ref === 'object' && ref !== null && !Array.isArray(ref);
    return [isObject ? notPlainObject(ref, field, '{group?, resource, namespace?, name}') : notAParentRef(ref, field)];
  }
  const out: string[] = [];
  for (const key of Object.keys(ref)) {
    if (!(PARENT_REF_KEYS as readonly string[]).includes(key)) out.push(`${memberName(field, key)}: Unknown field`);
  }
  for (const sym of Object.getOwnPropertySymbols(ref)) {
    // enumerable ones only, as for the names above: a store's copy (a spread) leaves the others out
    if (Object.prototype.propertyIsEnumerable.call(ref, sym)) out.push(`${memberName(field, sym)}: Unknown field`);
  }
  for (const key of PARENT_REF_KEYS) {
    // own enumerable fields only, as a store copies them (a spread): what is checked is what is stored
    const v = Object.prototype.propertyIsEnumerable.call(ref, key) ? ref[key] : undefined;
    const optional = key === 'group' || key === 'namespace';
    if (v === undefined || v === '') {
      if (!optional) out.push(`${field}.${key}: Required value`);
      continue;
    }
    if (typeof v !== 'string') {
      out.push(`${field}.${key}: Invalid value: ${quoteInput(v)}: must be a string`);
      continue;
    }
    const problems = key === 'group' ? dns1123SubdomainProblems(v) : pathSegmentProblems(v);
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
 * Returns a frozen copy of the owner's own enumerable fields (undefined ones left out).
 * @internal
 */
export function checkParentRef(owner: unknown): ParentRef | null {
  if (owner === undefined || owner === null) return null;
  return requireParentRef(owner, 'owner');
}

/**
 * The check of checkParentRef for a value that must be an owner (null and undefined are refused
 * too), its problems named under `field` (e.g. `knownOwners[2]`): returns the frozen copy.
 * @internal
 */
export function requireParentRef(owner: unknown, field: string): ParentRef {
  if (isCheckedParentRef(owner)) return owner as ParentRef; // our own copy, checked already: passed on by a MetaAllocator or DualStackAllocator
  // A frozen copy of the own enumerable fields, taken before the check: the record must not
  // change when the caller reuses its object for the next Service, an instance of the caller's
  // own class is read by its fields, and what is checked is what is stored. An object with no
  // fields of its own that is not plain (a Date, a Map, an Object.create(base), an instance of
  // a class whose fields are getters on its prototype) is no parentRef, as a string or an array
  // is not; the message says that only own fields are read, and where the required ones are.
  let fields: Record<string | symbol, unknown> | undefined;
  let hidden: string[] = []; // a parentRef's fields it has, but not as own enumerable fields
  let noFields: string | undefined; // an object with no own enumerable fields that is not plain: what it is (classOf)
  try {
    // the caller's code runs here: a Proxy's isArray, ownKeys, getPrototypeOf and has traps, getters
    if (typeof owner === 'object' && owner !== null && !Array.isArray(owner)) {
      const own = ownFields(owner, field);
      fields = own;
      // read only for a field not among the copied ones (an optional one too: dropped, the record
      // would name another parent); an owner with all four costs nothing here
      hidden = PARENT_REF_KEYS.filter(
        (key) => own[key] === undefined && key in owner && !Object.prototype.propertyIsEnumerable.call(owner, key),
      );
      if (Object.keys(own).length === 0 && !isPlainObject(owner)) noFields = classOf(owner);
    }
  } catch (e) {
    throw unreadableInput(field, e); // a revoked Proxy (a field whose getter throws: named by ownFields)
  }
  // Checked unguarded: only our copy is read from here, and a fault of ours is not the caller's.
  if (noFields !== undefined) throw new InvalidArgumentError(`${noOwnFields(noFields, field, hidden)}; ${OWNER_SHAPE}`);
  if (fields === undefined) throw new InvalidArgumentError(`${notAParentRef(owner, field)}, ${OWNER_EXAMPLE}`);
  const problems = parentRefProblems(fields, field);
  if (hidden.length > 0) problems.push(`${OWN_FIELDS_ONLY}: ${hiddenFields(hidden)}`);
  if (problems.length > 0) throw new InvalidArgumentError(`${problems.join('; ')}; ${OWNER_SHAPE}`);
  lastChecked = Object.freeze(fields); // of ParentRef's shape: parentRefProblems found nothing wrong
  return lastChecked as unknown as ParentRef;
}

/**
 * The owner requireParentRef returned last: a frozen plain copy of ours, known valid, so known
 * by identity as the allocators' label sets are (isAllocatorLabelSet). An owner's check is the
 * largest part of an allocation that names one (each Service's ClusterIP does): without this, a
 * MetaAllocator's or DualStackAllocator's owner was read and checked again by the range it went
 * to, and again by the MemoryStore, which copied it once more. One slot, not a set of every copy
 * made: the copy goes on at once (to the range, to the store's create), a WeakSet's add cost
 * about a third of the check itself, and an older copy is simply checked again.
 */
let lastChecked: object | null = null;

/** True for the parentRef requireParentRef (checkParentRef) returned last: frozen, plain, valid; a store keeps it as it is. @internal */
export function isCheckedParentRef(ref: unknown): boolean {
  return ref === lastChecked && ref !== null;
}

/**
 * A plain object with the own enumerable fields of `o` that are not undefined (as JSON would
 * send them), enumerable symbols included for the check to name. A field whose getter throws is
 * InvalidArgumentError naming it (readMember).
 */
function ownFields(o: object, base: string): Record<string | symbol, unknown> {
  const copy: Record<string | symbol, unknown> = {};
  for (const key of Object.keys(o)) {
    const v = readMember(o, key, base);
    if (v === undefined) continue;
    // A key the copy inherits ("__proto__", "toString", one given a setter or made read-only on
    // Object.prototype) defined, not assigned: an assignment would set the copy's prototype, run
    // the setter or throw, instead of making a field, and the check would not see it (a spread
    // copies it as a field). Every other key assigned: defineProperty would turn the copy into a
    // slow dictionary-mode object, read on every allocation that names this owner.
    if (key in copy) Object.defineProperty(copy, key, { value: v, enumerable: true, writable: true, configurable: true });
    else copy[key] = v;
  }
  for (const sym of Object.getOwnPropertySymbols(o)) {
    if (!Object.prototype.propertyIsEnumerable.call(o, sym)) continue;
    const v = readMember(o, sym, base);
    // defined, as an inherited key above: a setter for it on Object.prototype would drop it
    if (sym in copy) Object.defineProperty(copy, sym, { value: v, enumerable: true, writable: true, configurable: true });
    else copy[sym] = v;
  }
  return copy;
}

const nameWords = new Uint32Array(4);
/**
 * True when `name` is an address in canonical text and not IPv4-mapped IPv6 (address.ts parses
 * and compares the text with the words, building no string); false for anything else: the name
 * kube-apiserver's validation requires of an IPAddress, so any other names no allocation. The
 * name an allocator has just formatted or checked is known canonical without parsing
 * (isKnownCanonical).
 * @internal
 */
export function isCanonicalAddress(name: string): boolean {
  if (isKnownCanonical(name) || parseIPv4Fast(name) >= 0) return true;
  let family: Family;
  try {
    family = parseAddrInto(name, nameWords);
  } catch {
    return false;
  }
  return family === 6 && isCanonical(name, 6, nameWords);
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

/**
 * The problems of a record's labels: a plain object (absent = none) whose keys and values
 * kube-apiserver takes as labels (label-rules.ts), the keys and values strings.
 * @internal
 */
export function labelSetProblems(labels: unknown): string[] {
  if (labels === undefined) return [];
  if (!isPlainObject(labels)) {
    const isObject = typeof labels === 'object' && labels !== null && !Array.isArray(labels);
    if (isObject) return [notPlainObject(labels, 'metadata.labels', 'of string values')];
    return [`metadata.labels: Invalid value: ${quoteInput(labels)}: must be an object of string values`];
  }
  const out: string[] = [];
  for (const key of Object.keys(labels)) {
    const v = labels[key];
    if (typeof v === 'string') out.push(...labelProblems(key, v));
    else {
      out.push(...labelProblems(key, '')); // the key's problems only: an empty value is a valid one
      out.push(`metadata.labels[${quoteText(key)}]: Invalid value: ${quoteInput(v)}: must be a string`);
    }
  }
  // A store's copy (a spread) keeps an enumerable symbol key, which no API server label can be
  // (and a KubernetesStore's request would drop without a word): refused, as on a parentRef.
  for (const sym of Object.getOwnPropertySymbols(labels)) {
    if (Object.prototype.propertyIsEnumerable.call(labels, sym))
      out.push(`${memberName('metadata.labels', sym)}: Invalid value: a label's key must be a string`);
  }
  return out;
}

/**
 * Checks a record at a store's door, as kube-apiserver validates an IPAddress (HTTP 422
 * Invalid), and throws InvalidRecordError listing every problem; returns normally when the
 * record may be stored.
 * - `name`: an address in canonical form (`10.0.0.1`, `2001:db8::1`; not `010.0.0.1`,
 *   `2001:DB8::1`, `::ffff:10.0.0.1`, a CIDR or a zone).
 * - `labels`: absent, or a plain object of string values, each key and value one kube-apiserver
 *   takes as a label: a key is a name of at most 63 characters (alphanumeric at both ends,
 *   `-`, `_`, `.` between) with an optional DNS-subdomain prefix and `/` (`example.com/team`);
 *   a value is empty or such a name (not `has space`, not 64 characters).
 * - `parentRef`: the ParentReference shape (see checkParentRef), or null. kube-apiserver
 *   requires a parentRef (`spec.parentRef: Required value`), but upstream's allocator writes
 *   none from its owner-less entry points (`Allocate(ip)`, `AllocateNext()`), which its tests run
 *   against a fake client that stores them; our allocators write null there too, so an embedded
 *   store accepts null as "no owner" (a KubernetesStore's server still refuses it). Left out
 *   (undefined), it is refused as kube-apiserver refuses it: `spec.parentRef: Required value`.
 * A record, or a field of it, whose reading throws (a revoked Proxy, a getter that throws) is
 * malformed too: InvalidRecordError naming the field, what was thrown its `cause`.
 */
export function validateRecord(record: unknown): void {
  const { name, labels, parentRef } = readRecord(record);
  validateFields(name, labels, parentRef);
}

/**
 * The problem of a record given as an IPAddress object (`{ metadata: { name }, spec: { parentRef } }`,
 * as kubectl prints one): the API server's text alone would name the very fields it was given.
 */
const OBJECT_SHAPE =
  'metadata.name: Required value: a record is { name, labels, parentRef }, not an IPAddress object: ' +
  'its metadata.name goes in name, metadata.labels in labels and spec.parentRef in parentRef';

/**
 * The fields of a record given to a store, each read once: InvalidRecordError when it is not an
 * object, or when reading it throws (a revoked Proxy, a getter that throws: unreadableRecord).
 * @internal
 */
export function readRecord(record: unknown): { name: unknown; labels: unknown; parentRef: unknown } {
  let name: unknown = record;
  let field = 'record';
  try {
    if (typeof record !== 'object' || record === null || Array.isArray(record)) {
      throw new InvalidRecordError(record, ['a record must be an object {name, labels, parentRef}']);
    }
    const r = record as { name?: unknown; labels?: unknown; parentRef?: unknown };
    field = 'metadata.name';
    name = r.name;
    if (name === undefined && ('metadata' in r || 'spec' in r)) throw new InvalidRecordError(undefined, [OBJECT_SHAPE]);
    field = 'metadata.labels';
    const labels = r.labels;
    field = 'spec.parentRef';
    return { name, labels, parentRef: r.parentRef };
  } catch (e) {
    throw unreadableRecord(name, field, e);
  }
}

/**
 * The store's answer to a record whose `field` (`record`, `metadata.labels`, `spec.parentRef`)
 * threw when read: InvalidRecordError for `name` (the record itself while its name is unread),
 * as for any other malformed record (unreadableInput).
 * @internal
 */
export function unreadableRecord(name: unknown, field: string, thrown: unknown): IPAllocatorError {
  return unreadableInput(field, thrown, (message) => new InvalidRecordError(name, [message]));
}

/** validateRecord of a record's fields, read already (a store checks what it will keep). @internal */
export function validateFields(name: unknown, labels: unknown, ref: unknown): void {
  // The allocators' own records (their shared label set, no owner) need only the name checked:
  // they are most of a store's writes.
  if (typeof name === 'string' && isAllocatorLabelSet(labels) && (ref === null || isCheckedParentRef(ref)) && isCanonicalAddress(name))
    return;
  const problems = nameProblems(name);
  let field = 'metadata.labels';
  try {
    // the allocators' label sets (by identity) are frozen and known valid: not checked again
    if (!isAllocatorLabelSet(labels)) problems.push(...labelSetProblems(labels));
    field = 'spec.parentRef';
    // kube-apiserver's text for a nil parentRef (ValidateIPAddress); null is no owner (validateRecord)
    if (ref === undefined) problems.push('spec.parentRef: Required value');
    else if (ref !== null && !isCheckedParentRef(ref)) problems.push(...parentRefProblems(ref, 'spec.parentRef'));
  } catch (e) {
    throw unreadableRecord(name, field, e); // a revoked Proxy, a getter that throws
  }
  if (problems.length > 0) throw new InvalidRecordError(name, problems);
}

/**
 * Refuses `store` for an allocator of `family` (`who`, for the message) when its cache leaves out
 * the records such an allocator writes (CACHE_LEAVES_OUT).
 * @internal
 */
export function refuseBlindStore(store: Store, family: IPFamily, who: string): void {
  let leavesOut: unknown;
  try {
    leavesOut = (store as { [CACHE_LEAVES_OUT]?: unknown })[CACHE_LEAVES_OUT];
  } catch (e) {
    throw unreadableInput('options.store', e); // a Proxy whose get trap throws
  }
  if (typeof leavesOut !== 'function') return;
  const labels = writeLabelsFor(family);
  const filter = (leavesOut as (labels: Readonly<Record<string, string>>) => string | undefined).call(store, labels);
  if (filter === undefined) return;
  const written = Object.keys(labels)
    .map((k) => `${k}=${labels[k]}`)
    .join(',');
  throw new InvalidArgumentError(
    `${who}: options.store's cache selects ${quoteText(filter)}, which leaves out the IPAddresses an ${family} allocator writes (${written}): ` +
      'it would never see its own addresses (used() would stay 0, and each would be tried again at the server); ' +
      `give it a store whose cache holds them (family: '${family}', or no selector)`,
  );
}
