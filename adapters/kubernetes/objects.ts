// IPAddress objects ↔ IPAddressRecord, and the label selector the informer filters with.
//
// The JSON shape is the one upstream's allocator writes (pkg/registry/core/service/ipallocator,
// createIPAddress): apiVersion/kind set by the encoder, metadata {name, labels}, spec.parentRef
// with Go's `omitempty` (an empty group — the core group — is left out). A nil parentRef is sent
// as `spec: {}`, exactly as upstream does; a real API server answers 422 `spec.parentRef:
// Required value`.
import { InvalidArgumentError } from '../errors.ts';
import { isPlainObject, unreadableInput } from '../input.ts';
import { quoteInput, quoteText } from '../quote.ts';
import { labelKeyProblems, labelValueProblems } from '../label-rules.ts';
import { isAllocatorLabelSet, labelSetProblems, readRecord, unreadableRecord } from '../records.ts';
import { goInt64 } from './numbers.ts';
import type { ParentRef, IPAddressRecord } from '../store.ts';

/** @internal */
export const GROUP = 'networking.k8s.io';
export type ApiVersion = 'v1' | 'v1beta1';

/** networking.k8s.io version: 'v1' (default) or 'v1beta1'. @internal */
export function checkApiVersion(version: unknown): ApiVersion {
  if (version === undefined) return 'v1';
  if (version !== 'v1' && version !== 'v1beta1') {
    throw new InvalidArgumentError(`apiVersion must be "v1" or "v1beta1", got ${quoteInput(version)}`);
  }
  return version;
}

/** The metadata fields read of an object the API serves (timestamps may arrive as Date from client-node). */
export interface ObjectMetadata {
  name?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string | Date;
  labels?: Record<string, string>;
}

/** The JSON of an IPAddress as the API serves it (timestamps may arrive as Date from client-node). */
export interface IPAddressObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMetadata;
  spec?: { parentRef?: Partial<ParentRef> | null };
}

/** A record's fields as read once and copied (ownRecord): what is checked is what is sent. @internal */
export interface OwnRecord {
  readonly name: unknown;
  readonly labels: unknown;
  readonly parentRef: unknown;
}

/**
 * The fields of a record given to a store or to toObject, each read once (readRecord), with its
 * labels and parentRef copied when they are plain objects: a getter, or a Proxy, is read here
 * and never again, so the request body (bodyOf) holds what validateFields checked, even when a
 * second read would answer otherwise. What is not a plain object is kept as given, for the check
 * to refuse (a copy of a Map would be `{}`). A read that throws is InvalidRecordError naming the
 * field (unreadableRecord).
 * @internal
 */
export function ownRecord(record: unknown): OwnRecord {
  const { name, labels, parentRef } = readRecord(record);
  let field = 'metadata.labels';
  try {
    // the allocators' label sets are frozen data already (known by identity)
    const ownLabels = isAllocatorLabelSet(labels) || !isPlainObject(labels) ? labels : Object.freeze({ ...labels });
    field = 'spec.parentRef';
    const ownRef = isPlainObject(parentRef) ? Object.freeze({ ...parentRef }) : parentRef;
    return { name, labels: ownLabels, parentRef: ownRef };
  } catch (e) {
    throw unreadableRecord(name, field, e); // a revoked Proxy, a getter that throws
  }
}

/**
 * The body of a create, field for field what upstream sends, from a record's fields already read
 * (ownRecord) and checked (validateFields): its labels a plain object of strings, its parentRef
 * one of strings, or null.
 * @internal
 */
export function bodyOf(record: OwnRecord, version: ApiVersion): IPAddressObject {
  const spec: IPAddressObject['spec'] = {};
  const given = record.parentRef as Partial<ParentRef> | null | undefined;
  if (given) {
    // Go field order and omitempty: group, resource, namespace, name.
    const ref: Partial<ParentRef> = {};
    if (given.group) ref.group = given.group;
    if (given.resource) ref.resource = given.resource;
    if (given.namespace) ref.namespace = given.namespace;
    if (given.name) ref.name = given.name;
    spec.parentRef = ref;
  }
  return {
    apiVersion: `${GROUP}/${version}`,
    kind: 'IPAddress',
    metadata: { name: record.name as string, labels: { ...(record.labels as Record<string, string> | undefined) } },
    spec,
  };
}

/**
 * The body of a create for `record`, field for field what upstream sends (not validated: see
 * validateRecord). `version` is 'v1' (default) or 'v1beta1'. A record that is no object, or whose
 * reading throws, is InvalidRecordError; another version InvalidArgumentError.
 */
export function toObject(record: IPAddressRecord, version: ApiVersion = 'v1'): IPAddressObject {
  const checked = checkApiVersion(version);
  return bodyOf(ownRecord(record), checked);
}

/**
 * metav1.Time text (RFC 3339, seconds) from either a string or the Date client-node decodes;
 * undefined when absent, empty (Go's zero time serializes as null, never as "") or an invalid Date.
 * @internal
 */
export function timestamp(t: string | Date | null | undefined): string | undefined {
  if (t === undefined || t === null || t === '') return undefined;
  if (t instanceof Date) return Number.isNaN(t.getTime()) ? undefined : t.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return String(t);
}

/**
 * A frozen record from an object served by the API (watch event, list item, create answer),
 * checked first (answers.ts). Given anything but an object, or one whose reading throws (a
 * revoked Proxy, a getter that throws), InvalidArgumentError.
 */
export function toRecord(obj: IPAddressObject): IPAddressRecord {
  return readObject(obj, 'toRecord', 'IPAddress', recordOf);
}

/**
 * `convert(obj)` for a caller's `obj`, which must be an object: InvalidArgumentError naming `what`
 * when it is not, or when reading it throws (unreadableInput). An API server's answer is plain
 * JSON, checked before it is converted, and never throws here.
 * @internal
 */
export function readObject<O, R>(obj: O, what: string, kind: string, convert: (obj: O) => R): R {
  try {
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
      throw new InvalidArgumentError(`${what}: expected ${/^[AEIOU]/.test(kind) ? 'an' : 'a'} ${kind} object, got ${quoteInput(obj)}`);
    }
    return convert(obj);
  } catch (e) {
    throw unreadableInput(`${what}: the ${kind}`, e); // ours (the refusal above) passes as it is
  }
}

function recordOf(obj: IPAddressObject): IPAddressRecord {
  const meta = obj.metadata ?? {};
  const ref = obj.spec?.parentRef;
  let parentRef: ParentRef | null = null;
  if (ref) {
    const r: ParentRef = { resource: ref.resource ?? '', name: ref.name ?? '' };
    if (ref.group !== undefined) r.group = ref.group;
    if (ref.namespace !== undefined) r.namespace = ref.namespace;
    parentRef = Object.freeze(r);
  }
  const record: { -readonly [K in keyof IPAddressRecord]: IPAddressRecord[K] } = {
    name: meta.name ?? '',
    labels: Object.freeze({ ...(meta.labels ?? {}) }),
    parentRef,
  };
  if (meta.resourceVersion !== undefined) record.resourceVersion = meta.resourceVersion;
  if (meta.uid !== undefined) record.uid = meta.uid;
  const ts = timestamp(meta.creationTimestamp);
  if (ts !== undefined) record.creationTimestamp = ts;
  return Object.freeze(record);
}

/** What a DELETE answer says about the object it removed; each field only when the answer says it. @internal */
export interface DeleteOutcome {
  /** The object is gone. False: it is only marked for deletion (a finalizer is pending). */
  finished: boolean;
  /** The uid of the object removed, when the answer names it. */
  uid?: string;
}

/**
 * Reads a DELETE answer. kube-apiserver's IPAddress registry is the generic registry without
 * ReturnDeletedObject (pkg/registry/networking/ipaddress/storage/storage.go): a finished delete
 * answers a metav1.Status whose `details.uid` names the object removed. When a finalizer holds the
 * object, the delete only sets its deletionTimestamp and answers with the object itself. So only
 * an answer of kind Status says the object is gone; any other leaves it to the watch. `reply` is
 * the answer's JSON as sent (answer-probe.ts), once checkDeleteAnswer has found it to be one of
 * those two: client-node's decoding would read the object as a V1Status.
 * @internal
 */
export function deleteOutcome(reply: unknown): DeleteOutcome {
  if (typeof reply !== 'object' || reply === null) return { finished: false };
  const r = reply as { kind?: unknown; details?: { uid?: unknown } | null };
  if (r.kind !== 'Status') return { finished: false };
  const uid = r.details?.uid;
  return typeof uid === 'string' && uid !== '' ? { finished: true, uid } : { finished: true };
}

/**
 * apimachinery's IsValidPathSegmentName, the part a URL would change: not "", ".", "..". A
 * request for such a name would reach the collection (a DELETE there deletes every object).
 * @internal
 */
export function isPathSegmentName(name: unknown): name is string {
  return typeof name === 'string' && name !== '' && name !== '.' && name !== '..';
}

/**
 * resourceVersion as a number for ordering. The API calls it opaque, but kube-apiserver's watch
 * cache itself compares them as etcd revisions (uint64); undefined when not a plain decimal.
 * @internal
 */
export function revision(rv: string | undefined): number | undefined {
  if (rv === undefined || !/^\d{1,15}$/.test(rv)) return undefined;
  return Number(rv);
}

/** True when `a` is known to be at least as new as `b`. Unknown versions never win. @internal */
export function notOlder(a: string | undefined, b: string | undefined): boolean {
  const x = revision(a);
  const y = revision(b);
  return x !== undefined && y !== undefined && x >= y;
}

// --- label selectors (equality- and set-based string form) ------------------------------------

/**
 * One requirement of a label selector, as parseLabelSelector reads it: `key=value` or
 * `key==value` (eq), `key!=value` (neq), `key>n`, `key<n` (gt, lt), `key in (a,b)`,
 * `key notin (a,b)`, `key` (exists), `!key` (notexists).
 */
export type LabelRequirement =
  | { op: 'eq' | 'neq'; key: string; value: string }
  | { op: 'gt' | 'lt'; key: string; value: string }
  | { op: 'in' | 'notin'; key: string; values: readonly string[] }
  | { op: 'exists' | 'notexists'; key: string };

/**
 * A parsed label selector; `text` is what is sent to the server. Frozen, its requirements too: a
 * store's selector is read both by its informer (the text of each list and watch) and by the
 * allocators that check what its cache leaves out, and one changed in place would make the two
 * disagree.
 */
export interface LabelSelector {
  readonly text: string;
  readonly requirements: readonly LabelRequirement[];
}

/**
 * The spaces apimachinery's selector lexer skips: ASCII ones only. JavaScript's trim() and \s also
 * take Unicode spaces (a no-break space, a line separator), which would make `x=\u00a0` select
 * empty values where kube-apiserver refuses the selector.
 */
const SPACE = '[ \\t\\r\\n]';
const trimSpaces = (text: string): string => text.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');

/** Parses `a=b,c!=d,e in (x,y),!f,g>1`; throws InvalidArgumentError quoting the bad requirement. */
export function parseLabelSelector(text: string): LabelSelector {
  if (typeof text !== 'string') throw new InvalidArgumentError(`a label selector must be a string, got ${quoteInput(text)}`);
  const requirements: LabelRequirement[] = [];
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  const KEY = '([A-Za-z0-9][-A-Za-z0-9_./]*)';
  const VAL = '([-A-Za-z0-9_.]*)';
  for (const raw of parts) {
    const p = trimSpaces(raw);
    if (p === '' && parts.length === 1) break;
    let m: RegExpMatchArray | null;
    if ((m = p.match(new RegExp(`^${KEY}${SPACE}+(in|notin)${SPACE}*\\(([^)]*)\\)$`)))) {
      // As apimachinery's parser: "(a,)" is {a, ""}, and "()" is {""}
      requirements.push({ op: m[2] as 'in' | 'notin', key: m[1]!, values: m[3]!.split(',').map(trimSpaces) });
    } else if ((m = p.match(new RegExp(`^${KEY}${SPACE}*!=${SPACE}*${VAL}$`)))) {
      requirements.push({ op: 'neq', key: m[1]!, value: m[2]! });
    } else if ((m = p.match(new RegExp(`^${KEY}${SPACE}*==?${SPACE}*${VAL}$`)))) {
      requirements.push({ op: 'eq', key: m[1]!, value: m[2]! });
    } else if ((m = p.match(new RegExp(`^${KEY}${SPACE}*([<>])${SPACE}*${VAL}$`)))) {
      requirements.push({ op: m[2] === '>' ? 'gt' : 'lt', key: m[1]!, value: m[3]! });
    } else if ((m = p.match(new RegExp(`^!${SPACE}*${KEY}$`)))) {
      requirements.push({ op: 'notexists', key: m[1]! });
    } else if ((m = p.match(new RegExp(`^${KEY}$`)))) {
      requirements.push({ op: 'exists', key: m[1]! });
    } else {
      throw new InvalidArgumentError(`invalid label selector ${quoteText(text)}: cannot parse requirement ${quoteText(p)}`);
    }
  }
  for (const r of requirements) {
    const problem = operatorAsKey(r.key) ?? labelKeyProblem(r.key) ?? labelValuesProblem(r);
    if (problem !== undefined) throw new InvalidArgumentError(`invalid label selector ${quoteText(text)}: ${problem}`);
  }
  for (const r of requirements) {
    if (r.op === 'in' || r.op === 'notin') Object.freeze(r.values);
    Object.freeze(r);
  }
  return Object.freeze({ text: trimSpaces(text), requirements: Object.freeze(requirements) });
}

/**
 * A copy of `labels` when the API server would take them; InvalidArgumentError naming every label
 * it would refuse, as the API server words it (`metadata.labels: Invalid value: "bad key!": name
 * part must consist …`), or what reading them threw (a getter, a Proxy trap, a revoked Proxy).
 * The rule is a record's (labelSetProblems, as a store judges a record's labels): a plain
 * object — not a Map or a Date, whose entries are no labels and would be sent as {} — of string
 * values, each key and value one label-rules.ts takes. The copy, read once, is what is judged
 * and sent: a getter cannot answer the check one thing and the request another.
 * @internal
 */
export function checkedLabels(labels: unknown, owner: string): Record<string, string> {
  let copy: unknown = labels;
  let problems: string[];
  try {
    if (isPlainObject(labels)) copy = { ...labels };
    // judged inside the try too: labels that are no plain object are read again to be named
    // (their prototype, its constructor), and a Proxy's trap may throw then
    problems = labelSetProblems(copy);
  } catch (e) {
    throw unreadableInput('options.labels', e, (message) => new InvalidArgumentError(`${owner}: ${message}`));
  }
  if (problems.length > 0) throw new InvalidArgumentError(`${owner}: ${problems.join('; ')}`);
  return copy as Record<string, string>;
}

/**
 * A key the API server's selector lexer reads as an operator, `in` or `notin`, which no label key
 * can then be (apimachinery: "found 'in', expected: identifier"), or undefined. A value may be
 * one: the parser reads a value's token as an identifier whatever it is.
 */
function operatorAsKey(key: string): string | undefined {
  return key === 'in' || key === 'notin'
    ? `key ${quoteText(key)}: found '${key}', expected: identifier (the selector parser reads it as the operator)`
    : undefined;
}

/** Why the API server would refuse `key` as a label key (label-rules.ts), or undefined. */
function labelKeyProblem(key: string): string | undefined {
  const problems = labelKeyProblems(key);
  return problems.length === 0 ? undefined : `key ${quoteText(key)}: ${problems.join('; ')}`;
}

/** Why the API server would refuse a value of `r` (label-rules.ts), or undefined. */
function labelValuesProblem(r: LabelRequirement): string | undefined {
  let values: readonly string[];
  switch (r.op) {
    case 'in':
    case 'notin':
      values = r.values;
      break;
    case 'exists':
    case 'notexists':
      values = [];
      break;
    case 'gt':
    case 'lt':
      if (goInt64(r.value) === undefined) {
        return `for '>' and '<' the value must be an integer, got ${quoteText(r.value)} for key ${quoteText(r.key)}`;
      }
      values = [r.value];
      break;
    default:
      values = [r.value];
  }
  for (const v of values) {
    const problems = labelValueProblems(v);
    if (problems.length > 0) return `value ${quoteText(v)} of key ${quoteText(r.key)}: ${problems.join('; ')}`;
  }
  return undefined;
}

/** @internal */
export function matchesSelector(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (!selector) return true;
  for (const r of selector.requirements) {
    const has = Object.hasOwn(labels, r.key);
    const v = labels[r.key];
    switch (r.op) {
      case 'eq':
        if (!has || v !== r.value) return false;
        break;
      case 'neq':
        if (has && v === r.value) return false;
        break;
      case 'in':
        if (!has || !r.values.includes(v!)) return false;
        break;
      case 'notin':
        if (has && r.values.includes(v!)) return false;
        break;
      case 'gt':
      case 'lt': {
        // apimachinery: both sides must parse as int64, else no match
        const x = has ? goInt64(v!) : undefined;
        const y = goInt64(r.value);
        if (x === undefined || y === undefined || (r.op === 'gt' ? !(x > y) : !(x < y))) return false;
        break;
      }
      case 'exists':
        if (!has) return false;
        break;
      case 'notexists':
        if (has) return false;
        break;
    }
  }
  return true;
}
