// What an answer must be before anything is read from it: a list is an object with an `items`
// array of named objects, an object is an object named as asked, a delete's answer a Status or
// that object. An answer is whatever JSON the server sent (answer-probe.ts) — `{}`, `[]`, a JSON
// string, a Status, an object with a field of the wrong type — and reading such a body as a list
// without items would take it for an empty list: a cluster without IPAddresses or Services, a
// cache emptied. client-go cannot make that mistake (a body that does not decode as
// the list type fails the list), so each check below turns such a body into a failure that says
// what came back.
//
// A real kube-apiserver always writes `items` (an empty list is `"items": []`; its storage never
// leaves it nil) and `metadata`, and every object it serves has a name. So `"items": null`, which
// client-go would decode as an empty list, is refused here: read as empty it would empty a cache,
// or make every IPAddress an orphan, on the word of something that is not kube-apiserver. It also
// always writes `kind` and `apiVersion` on a list, on the object a get, create or delete answers
// with, on a Status and on a watch event's object (only a list's items go without them), and
// client-go's decoder cannot tell what a body is without them: `{"items": []}` is no empty list,
// and an answer without either is refused (typeProblem, the one place they are checked).

import { quoteInput, quoteText } from '../quote.ts';
import { describeBody } from './bodies.ts';

/** application/json, or a JSON-based type (application/merge-patch+json): what an answer to read must be. @internal */
export function isJson(contentType: string): boolean {
  return /^application\/([\w.-]+\+)?json$/i.test(contentType);
}

/** A list answer's parts, once checked. @internal */
export interface CheckedList {
  items: unknown[];
  metadata: { resourceVersion?: string; _continue?: string; continue?: string; remainingItemCount?: number };
}

/**
 * `body` as a list of `kind` (e.g. "IPAddressList"), or the reason it is not one: not an object,
 * another kind or none, no apiVersion or (when `apiVersion` is given: the one the list was asked
 * for, e.g. "networking.k8s.io/v1", or "v1" for Services) another one, no `items` array, no metadata, or an item that is not a
 * named object (the first such item is named by its index).
 * @internal
 */
export function checkList(body: unknown, kind: string, apiVersion?: string): CheckedList | string {
  const list = listShape(body, kind, apiVersion);
  if (typeof list === 'string') return list;
  // "List" is metav1's generic list: each item says its own kind and apiVersion, checked as the list's would be
  const itemKind = kind.replace(/List$/, '');
  const type = list.generic ? (apiVersion === undefined ? {} : { apiVersion }) : undefined;
  for (let i = 0; i < list.items.length; i++) {
    const problem = itemProblem(list.items[i], itemKind, type);
    if (problem !== undefined) return `${article(kind)} ${kind} whose item ${i} is ${problem}`;
  }
  return { items: list.items, metadata: list.metadata };
}

/**
 * `body` as a list of `kind`, or as metav1's generic `List` (kubectl's, a proxy's own: its
 * apiVersion is metav1's, "v1"), with its items unchecked; or the reason it is neither: not an
 * object, another kind or none, no apiVersion or (`apiVersion` given) another one, no `items`
 * array, no metadata. `generic`: it is a `List`, whose items each say their kind.
 * @internal
 */
export function listShape(body: unknown, kind: string, apiVersion?: string): (CheckedList & { generic: boolean }) | string {
  const a = article(kind);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return `${describeBody(body)}, not ${a} ${kind}`;
  const list = body as { kind?: unknown; items?: unknown; metadata?: unknown };
  const generic = list.kind === 'List';
  const expected = apiVersion === undefined ? undefined : generic ? 'v1' : apiVersion;
  const type = typeProblem(body, kind, { alsoKind: 'List', ...(expected === undefined ? {} : { apiVersion: expected }) });
  if (type !== undefined) return type;
  if (!Array.isArray(list.items)) {
    if (list.items === undefined) return `${a} ${kind} without items`;
    if (list.items === null) return `${a} ${kind} whose items are null`;
    const what = typeof list.items === 'object' ? 'an object' : describeBody(list.items);
    return `${a} ${kind} whose items are ${what}, not a list`;
  }
  if (typeof list.metadata !== 'object' || list.metadata === null) return `${a} ${kind} without metadata`;
  return { items: list.items, metadata: list.metadata as CheckedList['metadata'], generic };
}

/**
 * Why an item of a list cannot be read as an object of `kind`, or undefined: it is no named
 * object (namedObjectProblem), or — with `type`, for an item of a generic List, which says its
 * own kind and apiVersion — not of that kind (or apiVersion: one, or any of several), or a field
 * read from it has the wrong type (fieldProblem).
 * @internal
 */
export function itemProblem(item: unknown, kind: string, type?: { apiVersion?: string | readonly string[] }): string | undefined {
  let problem = namedObjectProblem(item);
  if (problem === undefined && type !== undefined) problem = typeProblem(item as object, kind, type);
  return problem ?? fieldProblem(item, kind);
}

/**
 * Why `obj`, an object, does not say it is of `kind` (or of `alsoKind`), or undefined when it
 * does: its `kind` is missing, not a string or another one ("an object without a kind, not an
 * IPAddressList", "an object of kind \"Status\", not …": `asked` names what was asked for, by
 * default "an <kind>"), or its `apiVersion` is missing or not a string ("an IPAddressList
 * without an apiVersion") or, when `apiVersion` is given (one, or the several accepted), another one. kube-apiserver writes both on every list, object answered
 * and watch event object, and client-go refuses a body whose kind it cannot tell; a body without
 * them is no list or object of ours, whatever else it holds. The one place kinds are checked: a
 * list page, a get, create or delete answer, a watch event's object.
 * @internal
 */
export function typeProblem(
  obj: object,
  kind: string,
  options: { asked?: string; alsoKind?: string; apiVersion?: string | readonly string[] } = {},
): string | undefined {
  const { kind: got, apiVersion } = obj as { kind?: unknown; apiVersion?: unknown };
  const asked = options.asked ?? `${article(kind)} ${kind}`;
  if (got !== kind && (options.alsoKind === undefined || got !== options.alsoKind)) {
    // a kind that is no string would be "without a kind" in describeBody's words: say what it is
    if (got !== undefined && got !== null && typeof got !== 'string') return `an object whose kind is ${valueWords(got)}, not ${asked}`;
    return `${describeBody(obj)}, not ${asked}`;
  }
  const what = `${article(got)} ${got}`;
  if (apiVersion === undefined || apiVersion === null || apiVersion === '') return `${what} without an apiVersion`;
  if (typeof apiVersion !== 'string') return `${what} whose apiVersion is ${valueWords(apiVersion)}, not a string`;
  const accepted = options.apiVersion === undefined || typeof options.apiVersion !== 'string' ? options.apiVersion : [options.apiVersion];
  if (accepted !== undefined && !accepted.includes(apiVersion)) {
    return `${what} of apiVersion ${quoteInput(apiVersion)}, not ${accepted.map((v) => JSON.stringify(v)).join(' or ')}`;
  }
  return undefined;
}

/**
 * Why `obj` is not an object with a name (an item of a list, the object of a watch event), or
 * undefined when it is one: "null", "an object without metadata", "an object without a name".
 * @internal
 */
export function namedObjectProblem(obj: unknown): string | undefined {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return describeBody(obj);
  const meta = (obj as { metadata?: unknown }).metadata;
  if (typeof meta !== 'object' || meta === null) return 'an object without metadata';
  const name = (meta as { name?: unknown }).name;
  if (typeof name !== 'string' || name === '') return 'an object without a name';
  return undefined;
}

/** A field's JSON type, as a Go struct field would decode it: text, a list of text, a map of text, an object, a list of objects. */
type FieldType = 'string' | 'strings' | 'string map' | 'object' | 'objects';

const METADATA: [string, FieldType][] = [
  ['metadata.namespace', 'string'],
  ['metadata.uid', 'string'],
  ['metadata.resourceVersion', 'string'],
  ['metadata.labels', 'string map'],
];

/** The fields read from each kind's objects, with the type each must have when present (null is absent, as in Go). */
const FIELDS: Record<string, [string, FieldType][]> = {
  IPAddress: [
    ...METADATA,
    // a metav1.Time: read as absent when of another type, a deletion under way would be taken
    // for none, and `check --fix` would propose to delete an object already going
    ['metadata.deletionTimestamp', 'string'],
    ['spec', 'object'],
    ['spec.parentRef', 'object'],
    ['spec.parentRef.group', 'string'],
    ['spec.parentRef.resource', 'string'],
    ['spec.parentRef.namespace', 'string'],
    ['spec.parentRef.name', 'string'],
  ],
  ServiceCIDR: [
    ...METADATA,
    // a metav1.Time, as an IPAddress's: `{}` read as a deletion under way would show the range as going
    ['metadata.deletionTimestamp', 'string'],
    ['spec', 'object'],
    ['spec.cidrs', 'strings'],
    ['status', 'object'],
    ['status.conditions', 'objects'],
  ],
  Service: [...METADATA, ['spec', 'object'], ['spec.clusterIP', 'string'], ['spec.clusterIPs', 'strings']],
  // a delete's answer (objects.ts deleteOutcome reads details.uid)
  Status: [
    ['details', 'object'],
    ['details.uid', 'string'],
  ],
};

const TYPE_WORDS: Record<FieldType, string> = {
  string: 'a string',
  strings: 'a list of strings',
  'string map': 'a map of strings',
  object: 'an object',
  objects: 'a list of objects',
};

/**
 * Why a named object of `kind` cannot be read, or undefined: a field read from it that has the
 * wrong JSON type (spec.cidrs a string or holding a number, clusterIPs a string, labels holding
 * a number). kube-apiserver serves no such object, and client-go fails to decode one; read as it
 * is, a string would be taken one character at a time and a number turned into text. So the
 * object is malformed as a whole, as one without a name is.
 * @internal
 */
export function fieldProblem(obj: unknown, kind: string): string | undefined {
  for (const [path, type] of FIELDS[kind] ?? []) {
    let value: unknown = obj;
    for (const key of path.split('.'))
      value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    if (value === undefined || value === null || hasType(value, type)) continue;
    const name = (obj as { metadata?: { name?: unknown } }).metadata?.name;
    const what = typeof name === 'string' ? `an object (${quoteText(name)})` : `${article(kind)} ${kind}`;
    return `${what} whose ${path} is ${valueWords(value)}, not ${TYPE_WORDS[type]}`;
  }
  return undefined;
}

function hasType(value: unknown, type: FieldType): boolean {
  const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'strings':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
    case 'string map':
      return isObject(value) && Object.values(value as object).every((v) => typeof v === 'string');
    case 'object':
      return isObject(value);
    case 'objects':
      return Array.isArray(value) && value.every(isObject);
  }
}

/**
 * A value of the wrong type in a few words: "a string", "a list holding a number", "an empty list",
 * "an object holding an object". One level inside is said, no deeper: a value nested thousands
 * deep is still a few words (and no recursion as deep as the value).
 */
function valueWords(value: unknown, inside = false): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return 'an empty list';
    if (inside) return 'a list';
    const odd = value.find((v) => typeof v !== 'string');
    return `a list holding ${odd === undefined ? 'strings' : valueWords(odd, true)}`;
  }
  if (value === null) return 'null';
  if (typeof value === 'object') {
    if (inside) return 'an object';
    const odd = Object.values(value).find((v) => typeof v !== 'string');
    return odd === undefined ? 'an object' : `an object holding ${valueWords(odd, true)}`;
  }
  return `a ${typeof value}`;
}

/**
 * `body` as the object of `kind` named `name` (and in `namespace`, for a namespaced one; in
 * `apiVersion`, when given: the one asked for, e.g. "networking.k8s.io/v1"), or the reason it is
 * not: a get answered with anything else must not be read as that object.
 * @internal
 */
export function checkObject(body: unknown, kind: string, name: string, namespace?: string, apiVersion?: string): string | undefined {
  const problem = namedObjectProblem(body);
  if (problem !== undefined) return `${problem}, not the ${kind} "${name}"`;
  const obj = body as { metadata: { name: string; namespace?: unknown } };
  const type = typeProblem(obj, kind, { asked: `the ${kind} "${name}"`, ...(apiVersion === undefined ? {} : { apiVersion }) });
  if (type !== undefined) return type;
  const field = fieldProblem(body, kind);
  if (field !== undefined) return `${field}, not the ${kind} "${name}"`;
  const at = namespace === undefined ? name : `${namespace}/${name}`;
  const got = namespace === undefined ? obj.metadata.name : `${String(obj.metadata.namespace ?? '')}/${obj.metadata.name}`;
  if (got !== at) return `the ${kind} ${quoteText(got)}, not ${quoteText(at)}`;
  return undefined;
}

/**
 * `body` as the answer to a delete of the `kind` named `name`, or the reason it is not one. A
 * finished delete answers a Status (kube-apiserver's generic registry; its `details.uid` names
 * the object removed); a delete a finalizer holds up answers with the object itself, marked for
 * deletion, and so may a 202 Accepted, with or without the mark: the object must then be the one
 * asked for (checkObject, in `apiVersion` when given). Anything else says nothing about what
 * was deleted.
 * @internal
 */
export function checkDeleteAnswer(body: unknown, kind: string, name: string, apiVersion?: string): string | undefined {
  const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
  const bodyKind = isObject ? (body as { kind?: unknown }).kind : undefined;
  if (bodyKind === 'Status') return typeProblem(body as object, 'Status') ?? fieldProblem(body, 'Status');
  const problem = checkObject(body, kind, name, undefined, apiVersion);
  if (problem === undefined || bodyKind === kind) return problem;
  return `${describeBody(body)}, neither a Status nor the ${kind} "${name}"`;
}

/** "an" before IPAddressList, "a" before ServiceList. */
function article(word: string): string {
  return /^[AEIOU]/.test(word) ? 'an' : 'a';
}
