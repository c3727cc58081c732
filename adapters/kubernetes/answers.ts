// What an answer must be before anything is read from it: a list is an object with an `items`
// array of named objects, an object is an object named as asked. client-node hands back whatever
// the body was — the text itself when the content type is not JSON (an auth proxy's login page,
// answered 200), an empty typed object for `{}`, a JSON string or a Status — and reading such a
// body as a list without items would take it for an empty list: a cluster without IPAddresses or
// Services, a cache emptied. client-go cannot make that mistake (a body that does not decode as
// the list type fails the list), so each check below turns such a body into a failure that says
// what came back.
//
// A real kube-apiserver always writes `items` (an empty list is `"items": []`; its storage never
// leaves it nil) and `metadata`, and every object it serves has a name. So `"items": null`, which
// client-go would decode as an empty list, is refused here: read as empty it would empty a cache,
// or make every IPAddress an orphan, on the word of something that is not kube-apiserver.

import { describeBody } from './bodies.ts';

/** application/json, or a JSON-based type (application/merge-patch+json): what an answer to read must be. */
export function isJson(contentType: string): boolean {
  return /^application\/([\w.-]+\+)?json$/i.test(contentType);
}

/** A list answer's parts, once checked. */
export interface CheckedList {
  items: unknown[];
  metadata: { resourceVersion?: string; _continue?: string; continue?: string; remainingItemCount?: number };
}

/**
 * `body` as a list of `kind` (e.g. "IPAddressList"), or the reason it is not one: not an object,
 * another kind, no `items` array, no metadata, or an item that is not a named object (the first
 * such item is named by its index).
 */
export function checkList(body: unknown, kind: string): CheckedList | string {
  const a = article(kind);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return `${describeBody(body)}, not ${a} ${kind}`;
  const list = body as { kind?: unknown; items?: unknown; metadata?: unknown };
  // "List" is metav1's generic list (kubectl's, a proxy's own): its items are checked all the same
  if (list.kind !== undefined && list.kind !== kind && list.kind !== 'List') return `${describeBody(body)}, not ${a} ${kind}`;
  if (!Array.isArray(list.items)) {
    if (list.kind === undefined) return `${describeBody(body)}, not ${a} ${kind}: it has no items`;
    return list.items === undefined ? `${a} ${kind} without items` : `${a} ${kind} whose items are ${describeBody(list.items)}`;
  }
  if (typeof list.metadata !== 'object' || list.metadata === null) return `${a} ${kind} without metadata`;
  for (let i = 0; i < list.items.length; i++) {
    const problem = namedObjectProblem(list.items[i]);
    if (problem !== undefined) return `${a} ${kind} whose item ${i} is ${problem}`;
  }
  return { items: list.items, metadata: list.metadata as CheckedList['metadata'] };
}

/**
 * Why `obj` is not an object with a name (an item of a list, the object of a watch event), or
 * undefined when it is one: "null", "an object without metadata", "an object without a name".
 */
export function namedObjectProblem(obj: unknown): string | undefined {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return describeBody(obj);
  const meta = (obj as { metadata?: unknown }).metadata;
  if (typeof meta !== 'object' || meta === null) return 'an object without metadata';
  const name = (meta as { name?: unknown }).name;
  if (typeof name !== 'string' || name === '') return 'an object without a name';
  return undefined;
}

/**
 * `body` as the object of `kind` named `name` (and in `namespace`, for a namespaced one), or the
 * reason it is not: a get answered with anything else must not be read as that object.
 */
export function checkObject(body: unknown, kind: string, name: string, namespace?: string): string | undefined {
  const problem = namedObjectProblem(body);
  if (problem !== undefined) return `${problem}, not the ${kind} "${name}"`;
  const obj = body as { kind?: unknown; metadata: { name: string; namespace?: unknown } };
  if (obj.kind !== undefined && obj.kind !== kind) return `${describeBody(body)}, not the ${kind} "${name}"`;
  const at = namespace === undefined ? name : `${namespace}/${name}`;
  const got = namespace === undefined ? obj.metadata.name : `${String(obj.metadata.namespace ?? '')}/${obj.metadata.name}`;
  if (got !== at) return `the ${kind} ${JSON.stringify(got)}, not ${JSON.stringify(at)}`;
  return undefined;
}

/** "an" before IPAddressList, "a" before ServiceList. */
function article(word: string): string {
  return /^[AEIOU]/.test(word) ? 'an' : 'a';
}
