// An API-server test double for IPAddress objects, over real HTTP (node:http; runs under Node
// and under Deno's node:http compatibility layer), or over HTTPS with `tls: true` (node:https,
// with tls.ts's SERVER_CERT for 127.0.0.1; kubeConfigFor's insecure-skip-tls-verify takes it).
// The tests of what credentials reach the server use https: kubectl sends none to an http://
// server.
//
// Serves, cluster-scoped, for API versions v1 and v1beta1 of networking.k8s.io:
//   /apis/networking.k8s.io/{v1,v1beta1}/ipaddresses          POST create, GET list / watch
//   /apis/networking.k8s.io/{v1,v1beta1}/ipaddresses/{name}   GET, DELETE
//   /apis/networking.k8s.io/{v1,v1beta1}/servicecidrs[/name]  the same verbs, minimally (no
//                                                              status subresource; status and
//                                                              conditions are set with modify())
// and core/v1 Services (list across or within namespaces, get, create, delete; no watch) — see
// the "core/v1 Services and RBAC denials" block, which also holds the denyAccess() 403 switch.
// Finalizers (any resource, used for servicecidrs): deleting an object whose metadata.finalizers
// is non-empty only sets metadata.deletionTimestamp (one MODIFIED event) and answers 200 with the
// object; a later modify() that leaves finalizers empty deletes it (one DELETED event), as the
// generic registry does.
//
// Behaviour modelled on kube-apiserver with its watch cache (checked against the API conventions
// and k8s.io/apiserver sources):
// * One global resourceVersion counter shared by every resource (an etcd revision), written as a
//   decimal string; every create and delete takes the next value.
// * create → 201 with the stored object (metadata.name, uid, resourceVersion, creationTimestamp);
//   a taken name → 409 Status reason AlreadyExists; a missing spec.parentRef → 422 Status reason
//   Invalid (`spec.parentRef: Required value`), switchable with `requireParentRef: false` because
//   the upstream test entry points create objects with a nil parentRef.
// * get → 200 object or 404 Status NotFound. delete → 200 Status Success whose details carry
//   name, group, kind (= the resource, "Yes we set Kind field to resource") and uid — the generic
//   registry's answer, since the IPAddress registry does not set ReturnDeletedObject; 404 NotFound.
//   With finalizers pending (see below) the answer is the object itself, as the generic registry's.
// * list → `{kind: IPAddressList, apiVersion, metadata: {resourceVersion[, continue,
//   remainingItemCount]}, items}`, items sorted by name (etcd key order) and without kind /
//   apiVersion (as the real server writes them); labelSelector with `k=v`, `k==v`, `k!=v`, `k`,
//   `!k`, `k in (a,b)`, `k notin (a,b)`; limit/continue over a snapshot taken by the first page
//   (a continue token from before `compact()` → 410 Expired, like an etcd-compacted snapshot).
// * watch (`?watch=true` or `watch=1`) → 200, chunked newline-delimited JSON events
//   `{"type":…,"object":…}` with ADDED / MODIFIED / DELETED (objects carry kind and apiVersion);
//   BOOKMARK events (object = kind, apiVersion, metadata.resourceVersion only) when the request
//   has allowWatchBookmarks=true and `bookmark()` is called or bookmarkIntervalMs is set.
//   resourceVersion unset or "0": synthetic ADDED for every current object, then changes (API
//   semantics "Get State and Start at Most Recent/Any"). resourceVersion=N: every change after N.
//   N older than the retained history (after `compact()`, or beyond `historyLimit` events) →
//   HTTP 200 followed by one ERROR event carrying a 410 Status reason Expired, message
//   `too old resource version: N (floor)`, then the stream ends — the cacher answers this way
//   ("other errors must fail with a watch event of type ERROR, rather than a directly returned
//   error"). Label selectors apply to events the way the cacher filters them: an update that
//   makes an object stop matching is sent as DELETED, start matching as ADDED.
//   timeoutSeconds ends the stream cleanly after that many seconds.
// * Unknown path → 404 Status NotFound "the server could not find the requested resource";
//   unsupported verb → 405 MethodNotAllowed; malformed JSON body → 400 BadRequest.
//
// Fault switches (all deterministic; nothing here depends on wall-clock timing unless asked):
//   setLatency(ms, verb?)       delay before answering (all verbs, or one)
//   failNext(verb, count, code[, message, retryAfterSeconds])
//                               the next `count` requests of that verb answer a 5xx/429 Status
//                               (429 and 504 name retryAfterSeconds 1 unless told another wait,
//                               and so a Retry-After header, as kube-apiserver writes any Status
//                               naming a wait; a watch is refused the same way)
//   timeOutAfterCommit(verb)    the next create or delete takes effect (stored or deleted, its
//                               watch event sent), then is answered 500 ServerTimeout with
//                               Retry-After: 1, as when etcd committed the write but answered
//                               too late (storage.NewTimeoutError → errors.NewServerTimeout)
//   failAfterCommit(verb, code) the next create or delete takes effect, then is answered `code`
//                               (502 by default) naming no wait: a proxy's 502 or 503 once the
//                               server had done the work, a 500 or 504 written after the commit
//   dropAfterCommit(verb)       the next create or delete takes effect, then its connection is
//                               dropped without an answer (the answer lost on the way)
//   dropBeforeCommit(verb)      the next create or delete is read, then its connection is dropped
//                               before it takes effect (nothing stored or deleted): to the client
//                               the same lost answer as dropAfterCommit
//   garbleNext(verb, count)     the next `count` requests of that verb answer 200 with a body
//                               that is not JSON (a proxy or a broken server)
//   cutMidBody(verb, how, count)  the next `count` requests of that verb are answered 200, and
//                               their connection is reset (or closed) part-way through the body
//                               (timed: the cut waits CUT_AFTER_MS after the first bytes)
//   proxyAnswerNext(verb, plural, body, options)
//                               the next requests of that verb on that resource (services,
//                               ipaddresses, servicecidrs) are answered by something in front of
//                               the server — an auth proxy's login page (200 text/html), `{}`, a
//                               Status sent with 200, a list whose items are not objects, a
//                               redirect (`headers: {location}`) — as given; `endless`: that
//                               start, then a body without end
//   sendWatchEvent(type, object) write one event with this object, as given, to every open watch
//                               (a proxy or a broken server: an object without metadata or name)
//   sendWatchText(text)         write text as given (no newline added) to every open watch: a line
//                               that is not JSON or not an event, a line longer than any event,
//                               sent in pieces
//   cutWatchEvents(count)       the next `count` events written to watches lose their second half
//                               (a proxy mangling the stream): the change is stored, its event
//                               reaches the client as a line that is not JSON
//   dropWatches(how)            cut every open watch connection mid-stream (no final chunk):
//                               closed (default) or reset
//   stopListening()/listenAgain()  the server process restarts: connections dropped, then
//                               refused (ECONNREFUSED) until it listens again; state kept
//   closeWatches()              end every open watch cleanly (server-side timeout), optionally
//                               discarding the queued events
//   holdWatches()/releaseWatches()  queue events on the open watches / deliver the queue
//   setWatchLag(ms)             deliver every watch event `ms` later (in order)
//   repeatContinue(plural)      every list page of ipaddresses or servicecidrs asked for with a
//                               continue token answers that same token again (a broken server
//                               or proxy: a client that follows it pages for ever)
//   emptyPagesForEver(plural)   every list page of ipaddresses or servicecidrs asked for with a
//                               continue token answers no items and a new token (a broken
//                               server or proxy: no token repeats, the listing never ends)
//   compact()                   drop the watch history: a watch from an older version gets 410
//   backup()/restoreBackup(b)   an etcd restore without --bump-revision: objects and revision go
//                               back, watches end; a watch from a later revision answers 504
//   bookmark()                  send a BOOKMARK now to watches that allow bookmarks
//   holdReply(verb)             the next request of that verb takes effect at once (stored, its
//                               watch event sent) but its HTTP answer waits for release(): the
//                               watch moves on while the reply is on its way
//
// managedFields: a create over HTTP records one entry, its manager the request's fieldManager
// (at most 128 characters, else 422), else the User-Agent up to its first "/", as kube-apiserver
// does; objects put in with insert() have none, and a client's own managedFields are dropped.
//
// Not implemented (say so rather than pretend): update/patch over HTTP (use `modify()`, which
// emits MODIFIED like one), managedFields beyond a create's entry, server-side apply, generation, graceful deletion
// (gracePeriodSeconds), dryRun, fieldSelector, resourceVersionMatch,
// sendInitialEvents (watch-list) and the initial-events-end bookmark, the real server's wait of up
// to 3 s before it answers a watch from a future resourceVersion (504 "Too large resource
// version"; here at once), the IP-name canonicality and ParentReference
// field-format validation beyond "required", authentication/authorization (any bearer token is
// accepted, and recorded, unless onlyToken is set; only denyAccess() refuses), protobuf and table output, HTTP/2, client
// certificates (the https server asks for none), the ServiceCIDR status
// subresource and its validation.

import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { SERVER_CERT, SERVER_KEY } from './tls.ts';

export const GROUP = 'networking.k8s.io';
export const SERVED_VERSIONS = ['v1', 'v1beta1'] as const;
export type ServedVersion = (typeof SERVED_VERSIONS)[number];

/** The verbs the fault switches and the request log name. */
export type Verb = 'create' | 'get' | 'list' | 'watch' | 'delete';

/** A Kubernetes object as JSON (what the double stores and serves). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    [k: string]: unknown;
  };
  spec?: Record<string, unknown>;
  [k: string]: unknown;
}

/** metav1.Status as the server writes it. */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: { reason?: string; message: string; field?: string }[];
    retryAfterSeconds?: number;
  };
  code?: number;
}

/** What backup() saves: the revision and each resource's objects. */
export interface EtcdBackup {
  rv: number;
  stores: [string, KubeObject[]][];
}

export interface ReceivedRequest {
  verb: Verb | 'unknown';
  method: string;
  /** Path without the query. */
  path: string;
  query: Record<string, string>;
  /** The parsed JSON body (POST), as received. */
  body?: unknown;
  /** The Authorization header (tests check the token reaches the server). */
  authorization?: string;
  /** The request target as sent (path and query, in the client's order and encoding). */
  target: string;
  /** Every header as received, names in lower case, in the order sent. */
  headers: [string, string][];
}

/** rawHeaders as [name in lower case, value] pairs. */
function headerPairs(req: http.IncomingMessage): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) pairs.push([req.rawHeaders[i]!.toLowerCase(), req.rawHeaders[i + 1]!]);
  return pairs;
}

export interface ApiServerDoubleOptions {
  /** Reject creates without spec.parentRef with 422 Invalid, like the real server. Default true. */
  requireParentRef?: boolean;
  /** Watch events kept for resuming watches (the watch cache's window). Default 1000. */
  historyLimit?: number;
  /** Send a BOOKMARK every this many ms to watches that allow bookmarks. Default 0 (only on bookmark()). */
  bookmarkIntervalMs?: number;
  /**
   * The networking.k8s.io versions served (default both): ['v1beta1'] is a cluster before
   * Kubernetes 1.33, which answers any v1 path with 404 "the server could not find the requested
   * resource" and no details, as kube-apiserver does for a version it does not serve.
   */
  versions?: readonly ServedVersion[];
  /**
   * Serve https:// (tls.ts SERVER_CERT and SERVER_KEY) instead of http://. Default false. For the
   * tests of what credentials reach the server: nothing of the user's is sent to an http:// one.
   */
  tls?: boolean;
  /**
   * How long a connection is kept open, idle, for the next request, in ms: Node's server
   * keepAliveTimeout, which it announces in its Keep-Alive header (undici keeps the connection 2 s
   * less). Default Node's: 5000. A test that needs a kept-alive connection to outlast a stall
   * between two of its requests (a loaded machine) sets it far longer.
   */
  keepAliveTimeoutMs?: number;
}

/** A reply held by `holdReply()`. */
export interface HeldReply {
  /** Resolves once the request has taken effect on the server (its answer is now waiting). */
  readonly applied: Promise<void>;
  /** Sends the answer. */
  release(): void;
}

interface ResourceType {
  plural: string;
  kind: string;
  validate(obj: KubeObject, double: ApiServerDouble): StatusCause[];
}

interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  rv: number;
  plural: string;
  object: KubeObject;
  /** The object before a MODIFIED (for selector transitions). */
  previous?: KubeObject;
}

interface OpenWatch {
  plural: string;
  version: ServedVersion;
  selector: Selector;
  bookmarks: boolean;
  res: http.ServerResponse;
  /** Events waiting while held or lagging, in order. */
  pending: string[];
  held: boolean;
  timers: Set<ReturnType<typeof setTimeout>>;
  closed: boolean;
}

const RESOURCES: Record<string, ResourceType> = {
  ipaddresses: {
    plural: 'ipaddresses',
    kind: 'IPAddress',
    validate(obj, double) {
      if (!double.requireParentRef) return [];
      const ref = obj.spec?.parentRef as Record<string, unknown> | undefined | null;
      if (ref === undefined || ref === null) return [required('spec.parentRef')];
      const causes: StatusCause[] = [];
      if (!ref.resource) causes.push(required('spec.parentRef.resource'));
      if (!ref.name) causes.push(required('spec.parentRef.name'));
      return causes;
    },
  },
  servicecidrs: {
    plural: 'servicecidrs',
    kind: 'ServiceCIDR',
    validate(obj) {
      const cidrs = obj.spec?.cidrs;
      if (!Array.isArray(cidrs) || cidrs.length === 0) return [required('spec.cidrs')];
      return [];
    },
  },
};

function required(field: string): StatusCause {
  return { reason: 'FieldValueRequired', message: 'Required value', field };
}

// ---------------------------------------------------------------------------------------------
// Status objects (k8s.io/apimachinery/pkg/api/errors constructors)

export function statusFailure(code: number, reason: string, message: string, details?: Status['details']): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason };
  if (details !== undefined) s.details = details;
  s.code = code;
  return s;
}

function notFound(plural: string, name: string): Status {
  return statusFailure(404, 'NotFound', `${plural}.${GROUP} "${name}" not found`, { name, group: GROUP, kind: plural });
}

function alreadyExists(plural: string, name: string): Status {
  return statusFailure(409, 'AlreadyExists', `${plural}.${GROUP} "${name}" already exists`, { name, group: GROUP, kind: plural });
}

function invalid(kind: string, name: string, causes: StatusCause[]): Status {
  const list = causes.map((c) => `${c.field}: ${c.message}`);
  const joined = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
  return statusFailure(422, 'Invalid', `${kind}.${GROUP} "${name}" is invalid: ${joined}`, {
    name,
    group: GROUP,
    kind,
    causes,
  });
}

function expired(message: string): Status {
  return statusFailure(410, 'Expired', message);
}

/** kube-apiserver's errors.NewServerTimeout(resource, verb, 1): "please try again", with a wait. */
function serverTimeout(verb: string, plural: string): Status {
  return statusFailure(
    500,
    'ServerTimeout',
    `The ${verb} operation against ${plural}.${GROUP} could not be completed at this time, please try again.`,
    { name: verb, group: GROUP, kind: plural, retryAfterSeconds: 1 },
  );
}

/**
 * The Status a fault switch answers with (NewInternalError, NewServiceUnavailable, …);
 * `retryAfterSeconds`, when given, in its details (sendJSON then writes the Retry-After header).
 */
export function faultStatus(code: number, message = 'injected fault', retryAfterSeconds?: number): Status {
  const status = constructorStatus(code, message);
  if (retryAfterSeconds !== undefined) status.details = { ...status.details, retryAfterSeconds };
  return status;
}

/** The Status apimachinery's constructor for `code` writes. */
function constructorStatus(code: number, message: string): Status {
  switch (code) {
    case 500:
      return statusFailure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
    case 503:
      return statusFailure(503, 'ServiceUnavailable', message);
    case 504:
      return statusFailure(504, 'Timeout', message, { retryAfterSeconds: 1 });
    case 429:
      return statusFailure(429, 'TooManyRequests', message, { retryAfterSeconds: 1 });
    default:
      return statusFailure(code, 'InternalError', message);
  }
}

// ---------------------------------------------------------------------------------------------
// Label selectors (k8s.io/apimachinery/pkg/labels, the string form)

type Requirement =
  | { op: 'eq' | 'neq' | 'gt' | 'lt'; key: string; value: string }
  | { op: 'in' | 'notin'; key: string; values: string[] }
  | { op: 'exists' | 'notexists'; key: string };
export type Selector = Requirement[];

/** Go's strconv.ParseInt(text, 10, 64), or undefined where it fails. */
function parseInt64(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const n = BigInt(text);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

/** Parses a label selector string; throws Error with a message on malformed input. */
export function parseSelector(text: string | undefined): Selector {
  const out: Selector = [];
  if (text === undefined || text.trim() === '') return out;
  // Split on commas outside parentheses.
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
  for (const raw of parts) {
    const p = raw.trim();
    let m: RegExpMatchArray | null;
    if ((m = p.match(/^([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
      const values = m[3]!
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
      out.push({ op: m[2] as 'in' | 'notin', key: m[1]!, values });
    } else if ((m = p.match(/^([^\s!=(),]+)\s*!=\s*([^\s!=(),]*)$/))) {
      out.push({ op: 'neq', key: m[1]!, value: m[2]! });
    } else if ((m = p.match(/^([^\s!=(),]+)\s*==?\s*([^\s!=(),]*)$/))) {
      out.push({ op: 'eq', key: m[1]!, value: m[2]! });
    } else if ((m = p.match(/^([^\s!=(),<>]+)\s*([<>])\s*([^\s!=(),<>]*)$/))) {
      // apimachinery's Gt/Lt: one value, an integer (strconv.ParseInt)
      if (parseInt64(m[3]!) === undefined) throw new Error(`for 'Gt', 'Lt' operators, the value must be an integer: ${JSON.stringify(p)}`);
      out.push({ op: m[2] === '>' ? 'gt' : 'lt', key: m[1]!, value: m[3]! });
    } else if ((m = p.match(/^!\s*([^\s!=(),]+)$/))) {
      out.push({ op: 'notexists', key: m[1]! });
    } else if ((m = p.match(/^([^\s!=(),]+)$/))) {
      out.push({ op: 'exists', key: m[1]! });
    } else {
      throw new Error(`unable to parse requirement: ${JSON.stringify(p)}`);
    }
  }
  return out;
}

export function selectorMatches(selector: Selector, labels: Readonly<Record<string, string>> | undefined): boolean {
  const l = labels ?? {};
  for (const r of selector) {
    const has = Object.hasOwn(l, r.key);
    const v = l[r.key];
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
        const x = has ? parseInt64(v!) : undefined;
        const y = parseInt64(r.value);
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

// ---------------------------------------------------------------------------------------------

/**
 * How long cutMidBody waits after writing the first bytes of an answer before it cuts the
 * connection: time for the client, in this process or another, to read the headers (a few ms
 * on a loopback connection, even on a busy machine), so that the cut falls in its body.
 */
const CUT_AFTER_MS = 100;

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/**
 * The managedFields entry kube-apiserver writes for a create made by `manager`: operation Update,
 * the time to the second, and the fields the object was given (FieldsV1: `f:` per field, `.` for
 * a map that is itself owned).
 */
function managedFieldsEntry(manager: string, apiVersion: string, obj: KubeObject): Record<string, unknown> {
  const fieldSet = (value: unknown): Record<string, unknown> => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
    const set: Record<string, unknown> = { '.': {} };
    for (const [k, v] of Object.entries(value)) set[`f:${k}`] = fieldSet(v);
    return set;
  };
  const fields: Record<string, unknown> = {};
  const meta: Record<string, unknown> = {};
  for (const k of ['labels', 'annotations'] as const) if (obj.metadata[k] !== undefined) meta[`f:${k}`] = fieldSet(obj.metadata[k]);
  if (Object.keys(meta).length > 0) fields['f:metadata'] = meta;
  if (obj.spec !== undefined) {
    const { '.': _, ...spec } = fieldSet(obj.spec);
    if (Object.keys(spec).length > 0) fields['f:spec'] = spec;
  }
  return { manager, operation: 'Update', apiVersion, time: nowTimestamp(), fieldsType: 'FieldsV1', fieldsV1: fields };
}

/** RFC 3339 with second precision, as metav1.Time marshals. */
function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export class ApiServerDouble {
  /** http://127.0.0.1:<port>, or https:// with `tls: true` */
  url = '';
  requireParentRef: boolean;
  readonly historyLimit: number;
  /** The networking.k8s.io versions this server serves (ApiServerDoubleOptions.versions). */
  readonly versions: readonly ServedVersion[];
  /** Every request, in arrival order. */
  readonly requests: ReceivedRequest[] = [];

  private readonly server: http.Server | https.Server;
  private readonly stores = new Map<string, Map<string, KubeObject>>();
  private rv = 1;
  private history: WatchEvent[] = [];
  /** A watch from resourceVersion N < floor has missed events: 410. */
  private floor = 0;
  private readonly watches = new Set<OpenWatch>();
  private readonly faults = new Map<
    Verb,
    { count: number; code: number; message: string | undefined; retryAfterSeconds: number | undefined }
  >();
  private readonly latency = new Map<Verb | '*', number>();
  private readonly garbles = new Map<Verb, number>();
  /** Verbs whose next requests are cut part-way through their answer (cutMidBody), and how. */
  private readonly cuts = new Map<Verb, { how: 'reset' | 'close'; count: number }>();
  private readonly proxyAnswers = new Map<
    string,
    { count: number; status: number; contentType: string; body: string; endless: boolean; headers: Record<string, string> }
  >();
  /** How many bytes of filler the answers of `proxyAnswerNext(…, { endless: true })` have written, in all. */
  endlessBytesWritten = 0;
  /** How many connections clients have opened to the double, in all. */
  connectionsAccepted = 0;
  /** The requests of each HTTP method being answered now, and the most there were at once. */
  private readonly inFlight = new Map<string, number>();
  private readonly mostAtOnce = new Map<string, number>();
  /** The most requests of this HTTP method (`DELETE`) the double was answering at once, since it started. */
  mostInFlight(method: string): number {
    return this.mostAtOnce.get(method) ?? 0;
  }
  /** How many connections are open now. */
  get openConnections(): number {
    return this.sockets.size;
  }
  /** Resources whose list pages answer the continue token they were asked with (repeatContinue). */
  private readonly repeatedContinues = new Set<string>();
  /** Resources whose list pages asked for with a continue token answer no items and a new token (emptyPagesForEver). */
  private readonly emptyPages = new Set<string>();
  private emptyPagesServed = 0;
  /** Verbs whose next request takes effect and is then answered with a ServerTimeout (timeOutAfterCommit). */
  private readonly timeOutsAfterCommit = new Set<Verb>();
  private readonly dropsAfterCommit = new Set<Verb>();
  /** Verbs whose next request takes effect and is then answered with a 5xx naming no wait (failAfterCommit), by code. */
  private readonly failsAfterCommit = new Map<Verb, number>();
  /** Verbs whose next request is dropped unanswered before it takes effect (dropBeforeCommit). */
  private readonly dropsBeforeCommit = new Set<Verb>();
  /** Verbs whose next requests find their connection closed as they arrive (closeOnArrival): how many, on which connections. */
  private readonly arrivalCloses = new Map<Verb, { count: number; on: 'kept-alive' | 'any' }>();
  /** How many requests found their connection closed as they arrived (closeOnArrival), in all. */
  closedOnArrival = 0;
  /** How many requests each connection has carried (the one arriving included). */
  private readonly carried = new WeakMap<import('node:net').Socket, number>();
  private watchLagMs = 0;
  /** How many of the next events written to watches are cut in half (cutWatchEvents). */
  private cutEvents = 0;
  private holding = false;
  private readonly snapshots = new Map<string, { rv: number; items: KubeObject[]; generation: number }>();
  private compactions = 0;
  private bookmarkTimer: ReturnType<typeof setInterval> | undefined;
  private readonly sockets = new Set<import('node:net').Socket>();
  private readonly heldReplies: { verb: Verb; applied: () => void; released: Promise<void>; release: () => void }[] = [];

  private constructor(options: ApiServerDoubleOptions) {
    this.requireParentRef = options.requireParentRef ?? true;
    this.historyLimit = options.historyLimit ?? 1000;
    this.versions = options.versions ?? SERVED_VERSIONS;
    for (const plural of Object.keys(RESOURCES)) this.stores.set(plural, new Map());
    const serve = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      const method = req.method ?? '';
      const now = (this.inFlight.get(method) ?? 0) + 1;
      this.inFlight.set(method, now);
      this.mostAtOnce.set(method, Math.max(now, this.mostAtOnce.get(method) ?? 0));
      res.once('close', () => this.inFlight.set(method, this.inFlight.get(method)! - 1));
      this.carried.set(req.socket, (this.carried.get(req.socket) ?? 0) + 1);
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) this.sendJSON(res, 500, faultStatus(500, String(err)));
        else res.destroy();
      });
    };
    this.server = options.tls ? https.createServer({ cert: SERVER_CERT, key: SERVER_KEY }, serve) : http.createServer(serve);
    if (options.keepAliveTimeoutMs !== undefined) this.server.keepAliveTimeout = options.keepAliveTimeoutMs;
    this.server.on('connection', (s) => {
      this.connectionsAccepted++;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    if (options.bookmarkIntervalMs && options.bookmarkIntervalMs > 0) {
      this.bookmarkTimer = setInterval(() => this.bookmark(), options.bookmarkIntervalMs);
    }
  }

  /** Starts a double on 127.0.0.1 with an ephemeral port. */
  static async start(options: ApiServerDoubleOptions = {}): Promise<ApiServerDouble> {
    const d = new ApiServerDouble(options);
    await new Promise<void>((resolve, reject) => {
      d.server.once('error', reject);
      d.server.listen(0, '127.0.0.1', () => resolve());
    });
    const addr = d.server.address() as AddressInfo;
    d.url = `${options.tls ? 'https' : 'http'}://127.0.0.1:${addr.port}`;
    return d;
  }

  /**
   * The API server process goes away, as in a restart: every connection is dropped (open watches
   * end with an error) and the port refuses connections until `listenAgain()`. Objects, the
   * revision and the watch history stay, as etcd keeps them.
   */
  async stopListening(): Promise<void> {
    await this.shutDown(true);
  }

  /** Takes connections again on the same address after `stopListening()`. */
  async listenAgain(): Promise<void> {
    const port = Number(new URL(this.url).port);
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /** Ends every watch, closes every connection and the listener. */
  async close(): Promise<void> {
    if (this.bookmarkTimer) clearInterval(this.bookmarkTimer);
    this.bookmarkTimer = undefined;
    await this.shutDown(false);
  }

  /** Ends every watch (`abrupt`: as a dropped connection), closes every connection and the listener. */
  private async shutDown(abrupt: boolean): Promise<void> {
    for (const h of this.heldReplies.splice(0)) h.release();
    for (const w of [...this.watches]) this.endWatch(w, abrupt ? 'close' : 'clean');
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    const s = this.server as http.Server & { closeAllConnections?: () => void };
    if (typeof s.closeAllConnections === 'function') s.closeAllConnections();
    for (const sock of this.sockets) sock.destroy();
    await closed;
  }

  // --- state, for tests -----------------------------------------------------------------------

  /** The current resourceVersion (the last revision written). */
  get resourceVersion(): string {
    return String(this.rv);
  }

  /** Stored objects of a resource, sorted by name (internal form: no kind/apiVersion). */
  objects(plural = 'ipaddresses'): KubeObject[] {
    return [...this.stores.get(plural)!.values()].sort((a, b) => cmp(a.metadata.name, b.metadata.name)).map(clone);
  }

  /** Number of watch streams currently open (optionally of one resource). */
  openWatches(plural?: string): number {
    let n = 0;
    for (const w of this.watches) if (!w.closed && (plural === undefined || w.plural === plural)) n++;
    return n;
  }

  /** The requests of one verb. */
  requestsOf(verb: Verb): ReceivedRequest[] {
    return this.requests.filter((r) => r.verb === verb);
  }

  // --- direct writes (another actor writing to the cluster) -----------------------------------

  /** Creates an object as another client would; returns the stored object or the failure Status. */
  insert(obj: KubeObject, plural = 'ipaddresses'): KubeObject | Status {
    const res = this.doCreate(plural, clone(obj));
    return res.code === 201 ? (res.body as KubeObject) : (res.body as Status);
  }

  /** Deletes an object as another client would (with finalizers: marks it deleting); false when absent. */
  remove(name: string, plural = 'ipaddresses'): boolean {
    return this.doDelete(plural, name).code === 200;
  }

  /** Updates an object in place (like PUT): emits MODIFIED. Returns false when absent. */
  modify(name: string, mutate: (obj: KubeObject) => void, plural = 'ipaddresses'): boolean {
    const store = this.stores.get(plural)!;
    const prev = store.get(name);
    if (!prev) return false;
    const next = clone(prev);
    mutate(next);
    next.metadata.name = name;
    next.metadata.uid = prev.metadata.uid;
    next.metadata.creationTimestamp = prev.metadata.creationTimestamp;
    next.metadata.resourceVersion = String(++this.rv);
    const finalizers = next.metadata.finalizers;
    if (next.metadata.deletionTimestamp && !(Array.isArray(finalizers) && finalizers.length > 0)) {
      // The last finalizer removed from a deleting object: the update is the delete.
      store.delete(name);
      this.record({ type: 'DELETED', rv: this.rv, plural, object: clone(next) });
      return true;
    }
    store.set(name, next);
    this.record({ type: 'MODIFIED', rv: this.rv, plural, object: clone(next), previous: clone(prev) });
    return true;
  }

  // --- fault switches -------------------------------------------------------------------------

  /** Delays every answer (or one verb's) by `ms`; 0 removes it. */
  setLatency(ms: number, verb?: Verb): void {
    if (ms > 0) this.latency.set(verb ?? '*', ms);
    else this.latency.delete(verb ?? '*');
  }

  /**
   * The next `count` requests of `verb` fail with `code` (500, 503, 504, 429, …) and a Status.
   * `retryAfterSeconds` names the wait the Status asks for (details.retryAfterSeconds, and so the
   * Retry-After header): kube-apiserver's NewTooManyRequests(message, n) — API Priority and
   * Fairness, a shutting-down server —, a 503 asking for a wait. Default: the constructor's (1 for
   * 429 and 504, none for the others).
   */
  failNext(verb: Verb, count = 1, code = 500, message?: string, retryAfterSeconds?: number): void {
    this.faults.set(verb, { count, code, message, retryAfterSeconds });
  }

  /** The next `count` requests of `verb` answer 200 application/json with a truncated body (not JSON). */
  /**
   * The next `verb` request (create or delete) takes effect — the object stored or deleted, its
   * watch event sent — and is then answered 500 ServerTimeout naming a wait of 1 s (and so
   * Retry-After: 1): etcd committed the write, kube-apiserver gave up waiting for it.
   */
  timeOutAfterCommit(verb: 'create' | 'delete'): void {
    this.timeOutsAfterCommit.add(verb);
  }

  /**
   * The next `verb` request (create or delete) takes effect — the object stored or deleted, its
   * watch event sent — and is then answered `code` with a Status naming no wait (no Retry-After):
   * a proxy's 502 Bad Gateway or 503 once the server behind it had done the work, a 500 or a 504
   * written after etcd committed.
   */
  failAfterCommit(verb: 'create' | 'delete', code = 502): void {
    this.failsAfterCommit.set(verb, code);
  }

  /**
   * The next `verb` request (create or delete) takes effect — the object stored or deleted, its
   * watch event sent — and then its connection is dropped without an answer: the answer lost on
   * the way (a load balancer's idle cut, a network fault). The client cannot tell whether it
   * took effect. (Under Deno an undici client may not see the drop: give the call a
   * requestTimeoutMs.)
   */
  dropAfterCommit(verb: 'create' | 'delete'): void {
    this.dropsAfterCommit.add(verb);
  }

  /**
   * The next `verb` request (create or delete) is read, and then its connection is dropped
   * without an answer before it takes effect: nothing is stored or deleted (a request cut on its
   * way in, an API server gone before it wrote to etcd). The client sees what dropAfterCommit
   * shows it, and cannot tell the two apart. (Under Deno an undici client may not see the drop:
   * give the call a requestTimeoutMs.)
   */
  dropBeforeCommit(verb: 'create' | 'delete'): void {
    this.dropsBeforeCommit.add(verb);
  }

  /**
   * The next `count` requests of `verb` that come on a kept-alive connection (one that carried a
   * request before) find it closed as they arrive: the connection is dropped as soon as they
   * have come in, nothing done or answered, and the request is not recorded in `requests` (only
   * counted, in `closedOnArrival`) — the server's idle close of a kept-alive connection
   * (kube-apiserver's, a load balancer's) racing the client's next request on it. A request on a
   * new connection is served as usual, unless `on` is `'any'`: then the next `count` requests of
   * `verb` are closed so on whatever connection they come (a server or proxy dropping them).
   */
  closeOnArrival(verb: Verb, count = 1, on: 'kept-alive' | 'any' = 'kept-alive'): void {
    this.arrivalCloses.set(verb, { count, on });
  }

  garbleNext(verb: Verb, count = 1): void {
    this.garbles.set(verb, count);
  }

  /**
   * The next `count` requests of `verb` are answered 200 with the headers and the first bytes of
   * a chunked JSON body, then their connection is cut: `reset` sends an RST (a proxy or the
   * server process killed), `close` a FIN without the rest of the body (a load balancer's idle
   * cut). The cut waits CUT_AFTER_MS after those bytes are written, so that the client holds the
   * answer and is reading its body — the failure this switch is for; a cut before the headers
   * reach the client is a failed request instead.
   */
  cutMidBody(verb: Verb, how: 'reset' | 'close' = 'reset', count = 1): void {
    this.cuts.set(verb, { how, count });
  }

  /** Answers the request with the start of a body and cuts its connection (cutMidBody) when one is armed; true if it did. */
  private cutAnswer(res: http.ServerResponse, verb: Verb): boolean {
    const cut = this.cuts.get(verb);
    if (cut === undefined) return false;
    if (--cut.count <= 0) this.cuts.delete(verb);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"apiVersion":"networking.k8s.io/v1","metadata":{', () => {
      setTimeout(() => {
        const socket = res.socket;
        if (socket === null) return;
        if (cut.how === 'reset') socket.resetAndDestroy();
        else socket.destroy();
      }, CUT_AFTER_MS);
    });
    return true;
  }

  /**
   * The next `count` requests of `verb` on `plural` (services, ipaddresses, servicecidrs) get
   * `body` from something in front of the server instead of its answer: text as given (content
   * type default text/html, an auth proxy's login page), anything else as JSON (`{}`, a Status
   * sent with 200, a list whose items are null). Status default 200. With `endless`, `body` (text)
   * is only the start: spaces follow in chunks of 1 MiB without end, as fast as the client reads
   * them, until it goes away (`endlessBytesWritten` counts them) — a server or proxy streaming a
   * body that never ends. `headers` are sent with it (a redirect's `location`).
   */
  proxyAnswerNext(
    verb: Verb,
    plural: string,
    body: unknown,
    options: { status?: number; contentType?: string; count?: number; endless?: boolean; headers?: Record<string, string> } = {},
  ): void {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const contentType = options.contentType ?? (typeof body === 'string' ? 'text/html' : 'application/json');
    this.proxyAnswers.set(`${verb} ${plural}`, {
      count: options.count ?? 1,
      status: options.status ?? 200,
      contentType,
      body: text,
      endless: options.endless ?? false,
      headers: options.headers ?? {},
    });
  }

  /** Answers the request from the proxy (proxyAnswerNext) when one is armed for it; true if it did. */
  private proxyAnswer(res: http.ServerResponse, verb: Verb | 'unknown', plural: string): boolean {
    const key = `${verb} ${plural}`;
    const answer = this.proxyAnswers.get(key);
    if (answer === undefined) return false;
    if (--answer.count <= 0) this.proxyAnswers.delete(key);
    if (answer.endless) {
      res.writeHead(answer.status, { 'Content-Type': answer.contentType }); // chunked: no length
      res.write(answer.body);
      const filler = Buffer.alloc(1024 * 1024, ' ');
      res.on('error', () => {}); // the client going away mid-write
      const pump = (): void => {
        while (!res.destroyed) {
          this.endlessBytesWritten += filler.length;
          if (!res.write(filler)) {
            res.once('drain', pump);
            return;
          }
        }
      };
      pump();
      return true;
    }
    res.writeHead(answer.status, {
      ...answer.headers,
      'Content-Type': answer.contentType,
      'Content-Length': Buffer.byteLength(answer.body),
    });
    res.end(answer.body);
    return true;
  }

  /**
   * From now on every list page of `plural` (ipaddresses, servicecidrs) asked for with a continue
   * token answers with that same token (and the same items): no kube-apiserver does this; a broken
   * server or proxy might, and a client that follows the token never finishes its listing.
   */
  repeatContinue(plural: string): void {
    this.repeatedContinues.add(plural);
  }

  /**
   * From now on every list page of `plural` asked for with a continue token answers with no items
   * and a token never given before: no kube-apiserver does this (a page that goes on is full); a
   * broken server or proxy might, and no token repeats for a client to notice.
   */
  emptyPagesForEver(plural: string): void {
    this.emptyPages.add(plural);
  }

  /**
   * Writes one event of `type` carrying `object` as given to every open watch (of every
   * resource): what a broken server or a proxy might send, an object without metadata or name.
   */
  sendWatchEvent(type: string, object: unknown): void {
    for (const w of this.watches) this.deliver(w, { type, object });
  }

  /**
   * Writes `text` as given — no newline added — to every open watch (of every resource), in
   * order with its events: what a broken server or a proxy might send. A line longer than any
   * event can go out in pieces, without its newline.
   */
  sendWatchText(text: string): void {
    for (const w of this.watches) this.deliverText(w, text);
  }

  /**
   * The next `count` events written to watches (each watch's copy counts) keep only their first
   * half, then the newline: a proxy that mangles the stream. The change itself is stored as
   * usual, so a list shows it; the watch shows a line that is not JSON.
   */
  cutWatchEvents(count = 1): void {
    this.cutEvents = count;
  }

  /**
   * Cuts every open watch connection mid-stream (no terminating chunk), discarding queued events:
   * closed (`close`, the default: the socket destroyed, a FIN) or reset (`reset`, an RST), as a
   * crashed server or a proxy dropping the connection does. The client sees its body fail.
   */
  dropWatches(how: 'close' | 'reset' = 'close'): void {
    for (const w of [...this.watches]) this.endWatch(w, how);
  }

  /**
   * Ends every open watch cleanly, as a server-side watch timeout does. Queued (held or lagging)
   * events are sent first, unless `discardQueued` — then the client resumes from an older
   * resourceVersion, which after compact() gets the 410.
   */
  closeWatches(options: { discardQueued?: boolean } = {}): void {
    for (const w of [...this.watches]) {
      if (options.discardQueued) {
        for (const t of w.timers) clearTimeout(t);
        w.timers.clear();
        w.pending = [];
      }
      this.endWatch(w, 'clean');
    }
  }

  /** Queues events on the currently open watches instead of sending them. */
  holdWatches(): void {
    this.holding = true;
    for (const w of this.watches) w.held = true;
  }

  /** Sends the queued events and stops holding. */
  releaseWatches(): void {
    this.holding = false;
    for (const w of this.watches) {
      w.held = false;
      this.flush(w);
    }
  }

  /** Delivers each watch event `ms` later than it happens, in order; 0 turns lag off. */
  setWatchLag(ms: number): void {
    this.watchLagMs = ms;
    if (ms === 0) for (const w of this.watches) if (!w.held) this.flush(w);
  }

  /** The objects of every resource and the revision, as an etcd backup holds them (for restoreBackup). */
  backup(): EtcdBackup {
    return { rv: this.rv, stores: [...this.stores].map(([plural, objects]) => [plural, [...objects.values()].map(clone)]) };
  }

  /**
   * An etcd restore from `backup` without --bump-revision, as kube-apiserver serves it after its
   * restart: the objects and the revision go back to the backup's, the watch history is gone and
   * every open watch ends. A client that watched past the backup's revision then asks for a
   * revision the server has not reached (504 Too large resource version) and re-lists.
   */
  restoreBackup(backup: EtcdBackup): void {
    for (const [plural, objects] of backup.stores) {
      const store = this.stores.get(plural)!;
      store.clear();
      for (const o of objects) store.set(o.metadata.name, clone(o));
    }
    this.rv = backup.rv;
    this.history = [];
    this.floor = backup.rv;
    this.snapshots.clear();
    this.dropWatches();
  }

  /** Forgets the watch history (and paged-list snapshots): a watch from an older resourceVersion gets 410. */
  compact(): void {
    this.history = [];
    this.floor = this.rv;
    this.snapshots.clear();
    this.compactions++;
  }

  /**
   * Holds the answer to the next request of `verb` (create, delete, get or list): the request takes
   * effect at once — the object is stored or deleted and its watch event goes out — but the
   * client gets the answer only on `release()` (a list is read then). Meanwhile the test lets the
   * watch move on (another client deletes or re-creates the name), which a real network allows: a
   * reply and a watch event travel on different connections. Several holds are consumed in the
   * order they were set.
   */
  holdReply(verb: Verb): HeldReply {
    let applied!: () => void;
    let release!: () => void;
    const appliedP = new Promise<void>((r) => (applied = r));
    const released = new Promise<void>((r) => (release = r));
    this.heldReplies.push({ verb, applied, released, release });
    return { applied: appliedP, release };
  }

  /** Waits for release() when a hold is armed for `verb` (after the request took effect). */
  private async replyGate(verb: Verb): Promise<void> {
    const i = this.heldReplies.findIndex((h) => h.verb === verb);
    if (i < 0) return;
    const [h] = this.heldReplies.splice(i, 1);
    h!.applied();
    await h!.released;
  }

  /** Sends a BOOKMARK at the current resourceVersion to every watch that allows bookmarks. */
  bookmark(): void {
    for (const w of this.watches) {
      if (!w.bookmarks || w.closed) continue;
      const apiVersion = `${GROUP}/${w.version}`;
      const kind = RESOURCES[w.plural]!.kind;
      this.deliver(w, { type: 'BOOKMARK', object: { kind, apiVersion, metadata: { resourceVersion: String(this.rv) } } });
    }
  }

  // --- HTTP -----------------------------------------------------------------------------------

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://double');
    const query: Record<string, string> = {};
    url.searchParams.forEach((v, k) => (query[k] = v));
    const rawBody = await readBody(req);
    if (this.onlyToken !== undefined && req.headers.authorization !== `Bearer ${this.onlyToken}`) {
      // what kube-apiserver's authentication filter answers for a credential it does not accept
      return this.sendJSON(res, 401, statusFailure(401, 'Unauthorized', 'Unauthorized'));
    }
    if (url.pathname === '/api/v1/services' || url.pathname.startsWith('/api/v1/namespaces/')) {
      return this.handleServices(req, res, url.pathname, query, rawBody);
    }
    const m = url.pathname.match(/^\/apis\/networking\.k8s\.io\/([^/]+)\/([^/]+)(?:\/([^/]+))?\/?$/);
    const version = m?.[1] as ServedVersion | undefined;
    const plural = m?.[2];
    const name = m?.[3] !== undefined ? decodeURIComponent(m[3]) : undefined;
    const isWatch = query.watch === 'true' || query.watch === '1';
    let verb: Verb | 'unknown' = 'unknown';
    if (req.method === 'POST' && name === undefined) verb = 'create';
    else if (req.method === 'GET' && name !== undefined) verb = 'get';
    else if (req.method === 'GET' && isWatch) verb = 'watch';
    else if (req.method === 'GET') verb = 'list';
    else if (req.method === 'DELETE' && name !== undefined) verb = 'delete';

    const close = this.arrivalCloses.get(verb as Verb);
    if (close !== undefined && (close.on === 'any' || this.carried.get(req.socket)! > 1)) {
      if (--close.count === 0) this.arrivalCloses.delete(verb as Verb);
      this.closedOnArrival++;
      return void req.socket.destroy();
    }

    const entry: ReceivedRequest = {
      verb,
      method: req.method ?? '',
      path: url.pathname,
      query,
      target: req.url ?? '',
      headers: headerPairs(req),
    };
    if (typeof req.headers.authorization === 'string') entry.authorization = req.headers.authorization;
    if (rawBody.length > 0) {
      try {
        entry.body = JSON.parse(rawBody);
      } catch {
        entry.body = rawBody;
      }
    }
    this.requests.push(entry);

    if (!m || !this.versions.includes(version as ServedVersion) || !RESOURCES[plural!]) {
      return this.sendJSON(res, 404, statusFailure(404, 'NotFound', 'the server could not find the requested resource', {}));
    }
    if (verb === 'unknown') {
      return this.sendJSON(
        res,
        405,
        statusFailure(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`, {}),
      );
    }

    const denied = this.forbidden(verb, plural!, GROUP, name);
    if (denied) return this.sendJSON(res, 403, denied);

    const delay = this.latency.get(verb) ?? this.latency.get('*') ?? 0;
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));

    const fault = this.faults.get(verb);
    if (fault && fault.count > 0) {
      fault.count--;
      if (fault.count === 0) this.faults.delete(verb);
      return this.sendJSON(res, fault.code, faultStatus(fault.code, fault.message, fault.retryAfterSeconds));
    }
    if (this.dropsBeforeCommit.delete(verb)) return void res.socket?.destroy();
    if (this.proxyAnswer(res, verb, plural!)) return;
    if (this.cutAnswer(res, verb)) return;

    const garbled = this.garbles.get(verb) ?? 0;
    if (garbled > 0) {
      if (garbled === 1) this.garbles.delete(verb);
      else this.garbles.set(verb, garbled - 1);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"kind": "IPAddressLi');
      return;
    }

    switch (verb) {
      case 'create': {
        if (typeof entry.body !== 'object' || entry.body === null) {
          return this.sendJSON(res, 400, statusFailure(400, 'BadRequest', 'the body of the request was in an unknown format', {}));
        }
        const body = clone(entry.body) as KubeObject;
        const kind = RESOURCES[plural!]!.kind;
        if (
          (body.kind !== undefined && body.kind !== kind) ||
          (body.apiVersion !== undefined && body.apiVersion !== `${GROUP}/${version}`)
        ) {
          return this.sendJSON(
            res,
            400,
            statusFailure(
              400,
              'BadRequest',
              `the API version in the data (${body.apiVersion}) does not match the expected API version (${GROUP}/${version})`,
            ),
          );
        }
        // managedFields: kube-apiserver records who made the object under the request's
        // fieldManager, else the first part of its User-Agent (managerOrUserAgent)
        const manager = query.fieldManager ?? (req.headers['user-agent'] ?? '').split('/')[0]!.slice(0, 128);
        if (manager.length > 128) {
          return this.sendJSON(
            res,
            422,
            invalid(RESOURCES[plural!]!.kind, String(body.metadata?.name ?? ''), [
              { reason: 'FieldValueTooLong', message: 'Too long: may not be longer than 128', field: 'fieldManager' },
            ]),
          );
        }
        const r = this.doCreate(plural!, body, { manager, apiVersion: `${GROUP}/${version}` });
        await this.replyGate(verb);
        if (r.code === 201 && this.timeOutsAfterCommit.delete(verb)) return this.sendJSON(res, 500, serverTimeout(verb, plural!));
        if (r.code === 201 && this.dropsAfterCommit.delete(verb)) return void res.socket?.destroy();
        const failed = r.code === 201 ? this.failsAfterCommit.get(verb) : undefined;
        if (failed !== undefined) {
          this.failsAfterCommit.delete(verb);
          const status = faultStatus(failed, 'injected after commit');
          delete status.details?.retryAfterSeconds;
          return this.sendJSON(res, failed, status);
        }
        return this.sendJSON(res, r.code, r.code === 201 ? this.typed(r.body as KubeObject, plural!, version!) : r.body);
      }
      case 'get': {
        const obj = this.stores.get(plural!)!.get(name!);
        await this.replyGate(verb);
        if (!obj) return this.sendJSON(res, 404, notFound(plural!, name!));
        return this.sendJSON(res, 200, this.typed(obj, plural!, version!));
      }
      case 'delete': {
        const preconditions = (entry.body as { preconditions?: { uid?: unknown; resourceVersion?: unknown } } | undefined)?.preconditions;
        const r = this.doDelete(plural!, name!, version!, preconditions);
        await this.replyGate(verb);
        if (r.code === 200 && this.timeOutsAfterCommit.delete(verb)) return this.sendJSON(res, 500, serverTimeout(verb, plural!));
        if (r.code === 200 && this.dropsAfterCommit.delete(verb)) return void res.socket?.destroy();
        const failed = r.code === 200 ? this.failsAfterCommit.get(verb) : undefined;
        if (failed !== undefined) {
          this.failsAfterCommit.delete(verb);
          const status = faultStatus(failed, 'injected after commit');
          delete status.details?.retryAfterSeconds;
          return this.sendJSON(res, failed, status);
        }
        return this.sendJSON(res, r.code, r.body);
      }
      case 'list':
        await this.replyGate(verb);
        return this.list(res, plural!, version!, query);
      case 'watch':
        return this.watch(req, res, plural!, version!, query);
    }
  }

  private doCreate(
    plural: string,
    body: KubeObject,
    by?: { manager: string; apiVersion: string },
  ): { code: number; body: KubeObject | Status } {
    const type = RESOURCES[plural]!;
    const meta = (body.metadata ?? {}) as KubeObject['metadata'];
    const name = meta.name;
    if (typeof name !== 'string' || name === '') {
      return {
        code: 422,
        body: invalid(type.kind, '', [
          { reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' },
        ]),
      };
    }
    const store = this.stores.get(plural)!;
    // The real server validates before it tries the storage create.
    const causes = type.validate(body, this);
    if (causes.length > 0) return { code: 422, body: invalid(type.kind, name, causes) };
    if (store.has(name)) return { code: 409, body: alreadyExists(plural, name) };
    const stored: KubeObject = {
      ...body,
      metadata: {
        ...meta,
        name,
        uid: randomUUID(),
        resourceVersion: String(++this.rv),
        creationTimestamp: nowTimestamp(),
      },
    };
    delete stored.metadata.managedFields; // a client's own are not kept (the real server may keep them)
    if (by !== undefined) stored.metadata.managedFields = [managedFieldsEntry(by.manager, by.apiVersion, stored)];
    delete stored.kind;
    delete stored.apiVersion;
    if (stored.spec === undefined) stored.spec = {};
    store.set(name, stored);
    this.record({ type: 'ADDED', rv: this.rv, plural, object: clone(stored) });
    return { code: 201, body: clone(stored) };
  }

  private doDelete(
    plural: string,
    name: string,
    version: ServedVersion = 'v1',
    preconditions?: { uid?: unknown; resourceVersion?: unknown },
  ): { code: number; body: Status | KubeObject } {
    const store = this.stores.get(plural)!;
    const obj = store.get(name);
    if (!obj) return { code: 404, body: notFound(plural, name) };
    // DeleteOptions.preconditions, checked as the generic registry does: 409 Conflict, nothing deleted.
    for (const [field, have] of [
      ['UID', obj.metadata.uid],
      ['ResourceVersion', obj.metadata.resourceVersion],
    ] as const) {
      const want = field === 'UID' ? preconditions?.uid : preconditions?.resourceVersion;
      if (want !== undefined && want !== null && want !== have) {
        const message = `Operation cannot be fulfilled on ${plural}.${GROUP} "${name}": Precondition failed: ${field} in precondition: ${String(want)}, ${field} in object meta: ${have}`;
        return { code: 409, body: statusFailure(409, 'Conflict', message, { name, group: GROUP, kind: plural }) };
      }
    }
    const finalizers = obj.metadata.finalizers;
    if (Array.isArray(finalizers) && finalizers.length > 0) {
      // Finalizers pending: mark for deletion (once) and answer with the object.
      if (!obj.metadata.deletionTimestamp) this.modify(name, (o) => (o.metadata.deletionTimestamp = nowTimestamp()), plural);
      return { code: 200, body: this.typed(store.get(name)!, plural, version) };
    }
    store.delete(name);
    const gone = clone(obj);
    gone.metadata.resourceVersion = String(++this.rv);
    this.record({ type: 'DELETED', rv: this.rv, plural, object: gone });
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name, group: GROUP, kind: plural, uid: obj.metadata.uid! },
    };
    return { code: 200, body: status };
  }

  private list(res: http.ServerResponse, plural: string, version: ServedVersion, query: Record<string, string>): void {
    let selector: Selector;
    try {
      selector = parseSelector(query.labelSelector);
    } catch (e) {
      return this.sendJSON(res, 400, statusFailure(400, 'BadRequest', (e as Error).message));
    }
    const limit = query.limit !== undefined ? Number(query.limit) : 0;
    let snapshot: { rv: number; items: KubeObject[] };
    let start = 0;
    if (query.continue && this.emptyPages.has(plural)) {
      const metadata = { resourceVersion: String(this.rv), continue: `empty-${++this.emptyPagesServed}` };
      return this.sendJSON(res, 200, { kind: `${RESOURCES[plural]!.kind}List`, apiVersion: `${GROUP}/${version}`, metadata, items: [] });
    }
    if (query.continue) {
      const [id, offset] = decodeContinue(query.continue);
      const snap = id !== undefined ? this.snapshots.get(id) : undefined;
      if (!snap) {
        return this.sendJSON(
          res,
          410,
          expired(
            'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
          ),
        );
      }
      snapshot = snap;
      start = offset;
    } else {
      const items = [...this.stores.get(plural)!.values()]
        .filter((o) => selectorMatches(selector, o.metadata.labels))
        .sort((a, b) => cmp(a.metadata.name, b.metadata.name))
        .map(clone);
      snapshot = { rv: this.rv, items };
    }
    const end = limit > 0 ? Math.min(start + limit, snapshot.items.length) : snapshot.items.length;
    const metadata: Record<string, unknown> = { resourceVersion: String(snapshot.rv) };
    if (end < snapshot.items.length) {
      let id = query.continue ? decodeContinue(query.continue)[0]! : undefined;
      if (id === undefined) {
        id = randomUUID();
        this.snapshots.set(id, { ...snapshot, generation: this.compactions });
      }
      metadata.continue = encodeContinue(id, end);
      metadata.remainingItemCount = snapshot.items.length - end;
    }
    if (this.repeatedContinues.has(plural) && query.continue) metadata.continue = query.continue;
    this.sendJSON(res, 200, {
      kind: `${RESOURCES[plural]!.kind}List`,
      apiVersion: `${GROUP}/${version}`,
      metadata,
      items: snapshot.items.slice(start, end),
    });
  }

  private watch(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    plural: string,
    version: ServedVersion,
    query: Record<string, string>,
  ): void {
    let selector: Selector;
    try {
      selector = parseSelector(query.labelSelector);
    } catch (e) {
      return this.sendJSON(res, 400, statusFailure(400, 'BadRequest', (e as Error).message));
    }
    const rvText = query.resourceVersion ?? '';
    if (rvText !== '' && !/^\d+$/.test(rvText)) {
      return this.sendJSON(res, 400, statusFailure(400, 'BadRequest', `invalid resource version: ${rvText}`));
    }
    if (rvText !== '' && rvText !== '0' && Number(rvText) > this.rv) {
      // A revision the server has not reached (after restoreBackup): the real one waits up to 3 s
      // for its watch cache to catch up, then answers this; here it answers at once.
      return this.sendJSON(
        res,
        504,
        statusFailure(504, 'Timeout', `Timeout: Too large resource version: ${rvText}, current: ${this.rv}`, {
          causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
          retryAfterSeconds: 1,
        }),
      );
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    // Like the real server: headers go out at once, before the first event.
    res.flushHeaders();
    const w: OpenWatch = {
      plural,
      version,
      selector,
      bookmarks: query.allowWatchBookmarks === 'true',
      res,
      pending: [],
      held: false,
      timers: new Set(),
      closed: false,
    };
    const onClose = () => this.endWatch(w, 'clean');
    req.on('close', onClose);
    res.on('close', onClose);

    if (rvText === '' || rvText === '0') {
      this.watches.add(w);
      for (const obj of this.objects(plural)) {
        if (selectorMatches(selector, obj.metadata.labels)) this.deliver(w, { type: 'ADDED', object: this.typed(obj, plural, version) });
      }
    } else {
      const from = Number(rvText);
      if (from < this.floor) {
        this.deliver(w, { type: 'ERROR', object: expired(`too old resource version: ${from} (${this.floor})`) });
        this.endWatch(w, 'clean');
        return;
      }
      this.watches.add(w);
      for (const ev of this.history) if (ev.rv > from && ev.plural === plural) this.send(w, ev);
    }
    w.held = this.holding;
    const timeout = query.timeoutSeconds !== undefined ? Number(query.timeoutSeconds) : 0;
    if (timeout > 0) {
      const t = setTimeout(() => this.endWatch(w, 'clean'), timeout * 1000);
      w.timers.add(t);
    }
  }

  /** Appends to the history and fans the event out to matching watches. */
  private record(ev: WatchEvent): void {
    this.history.push(ev);
    if (this.history.length > this.historyLimit) {
      this.history.shift();
      this.floor = this.history[0]!.rv - 1;
    }
    for (const w of this.watches) if (w.plural === ev.plural) this.send(w, ev);
  }

  /** Filters one event for a watch, cacher-style, and delivers it. */
  private send(w: OpenWatch, ev: WatchEvent): void {
    const now = selectorMatches(w.selector, ev.object.metadata.labels);
    let type: WatchEvent['type'] = ev.type;
    if (ev.type === 'MODIFIED') {
      const before = ev.previous ? selectorMatches(w.selector, ev.previous.metadata.labels) : now;
      if (!before && !now) return;
      if (before && !now) type = 'DELETED';
      else if (!before && now) type = 'ADDED';
    } else if (!now) return;
    this.deliver(w, { type, object: this.typed(ev.object, w.plural, w.version) });
  }

  private deliver(w: OpenWatch, event: { type: string; object: unknown }): void {
    if (w.closed) return;
    let line = JSON.stringify(event);
    if (this.cutEvents > 0) {
      this.cutEvents--;
      line = line.slice(0, Math.floor(line.length / 2));
    }
    this.deliverText(w, line + '\n');
  }

  /** Sends `text` to one watch after what is queued on it (held or lagging), or queues it too. */
  private deliverText(w: OpenWatch, text: string): void {
    if (w.closed) return;
    w.pending.push(text);
    if (w.held) return;
    if (this.watchLagMs > 0) {
      const t = setTimeout(() => {
        w.timers.delete(t);
        // Deliver the oldest pending line: lag keeps order since every line waits equally long.
        if (!w.held && !w.closed && w.pending.length > 0) w.res.write(w.pending.shift()!);
      }, this.watchLagMs);
      w.timers.add(t);
      return;
    }
    this.flush(w);
  }

  private flush(w: OpenWatch): void {
    if (w.closed) return;
    if (w.pending.length > 0) w.res.write(w.pending.join(''));
    w.pending = [];
  }

  /** Ends one watch: `clean`ly (what is queued sent, then the terminating chunk), or its connection cut (`close`, `reset`). */
  private endWatch(w: OpenWatch, end: 'clean' | 'close' | 'reset'): void {
    if (w.closed) return;
    if (end === 'clean') this.flush(w);
    w.closed = true;
    for (const t of w.timers) clearTimeout(t);
    w.timers.clear();
    w.pending = [];
    this.watches.delete(w);
    if (end === 'clean') {
      if (!w.res.writableEnded) w.res.end();
      return;
    }
    // No terminating chunk: the client sees the body end with an error — a reset as ECONNRESET
    // once it has read the answer's headers; one that had not yet may see the stream's end
    // instead (Linux hands over the data it holds, then the end, not the reset).
    if (end === 'reset') w.res.socket?.resetAndDestroy();
    else w.res.socket?.destroy();
    w.res.destroy();
  }

  // --- core/v1 Services and RBAC denials (what the command line reads) ------------------------
  //
  //   /api/v1/services                          GET list (every namespace)
  //   /api/v1/namespaces/{ns}/services          GET list (one namespace), POST create
  //   /api/v1/namespaces/{ns}/services/{name}   GET, DELETE
  // Lists are sorted by namespace then name (etcd key order) and page with limit/continue over a
  // snapshot, like the networking resources; creates and deletes take the next resourceVersion.
  // Not implemented for Services: watch, update, label selectors, ClusterIP allocation (the
  // object is stored as given: tests write spec.clusterIPs themselves), validation.
  //
  // denyAccess(verb, resource): every request of that verb on that resource ("services",
  // "ipaddresses", "servicecidrs") answers 403 Forbidden with the Status kube-apiserver's
  // authorizer writes (reason Forbidden, details.group/kind, a message naming user, verb,
  // resource, API group and scope). denyAccess(verb, resource, name): only the requests naming
  // that object, as RBAC with resourceNames refuses (same Status, the object's name in it).

  private readonly serviceStore = new Map<string, KubeObject>();
  private readonly denials = new Set<string>();

  /** Creates a Service as another client would (spec as given); returns the stored object. */
  insertService(obj: KubeObject): KubeObject {
    const ns = (obj.metadata.namespace as string | undefined) ?? 'default';
    const stored: KubeObject = clone(obj);
    stored.metadata = {
      ...stored.metadata,
      namespace: ns,
      uid: randomUUID(),
      resourceVersion: String(++this.rv),
      creationTimestamp: nowTimestamp(),
    };
    delete stored.kind;
    delete stored.apiVersion;
    this.serviceStore.set(`${ns}/${obj.metadata.name}`, stored);
    return clone(stored);
  }

  /** Deletes a Service; false when absent. */
  removeService(namespace: string, name: string): boolean {
    if (!this.serviceStore.delete(`${namespace}/${name}`)) return false;
    this.rv++;
    return true;
  }

  /** Stored Services in key order (namespace/name). */
  services(): KubeObject[] {
    return [...this.serviceStore.entries()].sort((a, b) => cmp(a[0], b[0])).map(([, o]) => clone(o));
  }

  /**
   * Requests of `verb` on `resource` (a plural: services, ipaddresses, servicecidrs) get 403
   * Forbidden; with `name`, only those naming that object — as an RBAC rule with
   * `resourceNames` grants the verb for the other objects and not this one (for a Service, the
   * name is "namespace/name").
   */
  denyAccess(verb: Verb, resource: string, name?: string): void {
    this.denials.add(name === undefined ? `${verb} ${resource}` : `${verb} ${resource} ${name}`);
  }

  /** Only requests with this bearer token are authenticated; any other gets 401 Unauthorized (undefined: any token). */
  onlyToken: string | undefined = undefined;

  /** Lifts every denyAccess(). */
  allowAll(): void {
    this.denials.clear();
  }

  /** The 403 Status for a denied request, or undefined when it is allowed. */
  private forbidden(verb: Verb | 'unknown', plural: string, group: string, name?: string, namespace?: string): Status | undefined {
    const object = namespace === undefined ? name : `${namespace}/${name}`;
    if (!this.denials.has(`${verb} ${plural}`) && !(name !== undefined && this.denials.has(`${verb} ${plural} ${object}`)))
      return undefined;
    const qualified = group === '' ? plural : `${plural}.${group}`;
    const target = name === undefined ? '' : ` "${name}"`;
    const scope = namespace === undefined ? 'at the cluster scope' : `in the namespace "${namespace}"`;
    const details: Status['details'] = { group, kind: plural };
    if (name !== undefined) details.name = name;
    return statusFailure(
      403,
      'Forbidden',
      `${qualified}${target} is forbidden: User "system:serviceaccount:default:tester" cannot ${verb} resource "${plural}" in API group "${group}" ${scope}`,
      details,
    );
  }

  private handleServices(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    path: string,
    query: Record<string, string>,
    rawBody: string,
  ): void {
    const m = path.match(/^\/api\/v1\/(?:namespaces\/([^/]+)\/)?services(?:\/([^/]+))?\/?$/);
    const namespace = m?.[1] !== undefined ? decodeURIComponent(m[1]) : undefined;
    const name = m?.[2] !== undefined ? decodeURIComponent(m[2]) : undefined;
    let verb: Verb | 'unknown' = 'unknown';
    if (m && namespace !== undefined && name !== undefined && req.method === 'GET') verb = 'get';
    else if (m && namespace !== undefined && name !== undefined && req.method === 'DELETE') verb = 'delete';
    else if (m && name === undefined && req.method === 'GET') verb = query.watch === 'true' || query.watch === '1' ? 'watch' : 'list';
    else if (m && namespace !== undefined && name === undefined && req.method === 'POST') verb = 'create';
    const entry: ReceivedRequest = { verb, method: req.method ?? '', path, query, target: req.url ?? '', headers: headerPairs(req) };
    if (typeof req.headers.authorization === 'string') entry.authorization = req.headers.authorization;
    if (rawBody.length > 0) {
      try {
        entry.body = JSON.parse(rawBody);
      } catch {
        entry.body = rawBody;
      }
    }
    this.requests.push(entry);
    if (!m) return this.sendJSON(res, 404, statusFailure(404, 'NotFound', 'the server could not find the requested resource', {}));
    if (verb === 'unknown' || verb === 'watch') {
      return this.sendJSON(
        res,
        405,
        statusFailure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}),
      );
    }
    const denied = this.forbidden(verb, 'services', '', name, namespace);
    if (denied) return this.sendJSON(res, 403, denied);
    const fault = this.faults.get(verb);
    if (fault && fault.count > 0) {
      fault.count--;
      if (fault.count === 0) this.faults.delete(verb);
      return this.sendJSON(res, fault.code, faultStatus(fault.code, fault.message, fault.retryAfterSeconds));
    }
    if (this.proxyAnswer(res, verb, 'services')) return;
    const typedService = (o: KubeObject): KubeObject => ({ kind: 'Service', apiVersion: 'v1', ...clone(o) });
    const missing = (n: string) => statusFailure(404, 'NotFound', `services "${n}" not found`, { name: n, kind: 'services' });
    switch (verb) {
      case 'get': {
        const obj = this.serviceStore.get(`${namespace}/${name}`);
        return obj ? this.sendJSON(res, 200, typedService(obj)) : this.sendJSON(res, 404, missing(name!));
      }
      case 'delete': {
        const obj = this.serviceStore.get(`${namespace}/${name}`);
        if (!obj) return this.sendJSON(res, 404, missing(name!));
        this.removeService(namespace!, name!);
        return this.sendJSON(res, 200, typedService(obj));
      }
      case 'create': {
        const body = entry.body as KubeObject | undefined;
        if (typeof body !== 'object' || body === null || typeof body.metadata?.name !== 'string') {
          return this.sendJSON(res, 400, statusFailure(400, 'BadRequest', 'the body of the request was in an unknown format', {}));
        }
        if (this.serviceStore.has(`${namespace}/${body.metadata.name}`)) {
          const n = body.metadata.name;
          return this.sendJSON(
            res,
            409,
            statusFailure(409, 'AlreadyExists', `services "${n}" already exists`, { name: n, kind: 'services' }),
          );
        }
        return this.sendJSON(
          res,
          201,
          typedService(this.insertService({ ...body, metadata: { ...body.metadata, namespace: namespace! } })),
        );
      }
      case 'list': {
        const limit = query.limit !== undefined ? Number(query.limit) : 0;
        let snapshot: { rv: number; items: KubeObject[] };
        let start = 0;
        let id: string | undefined;
        if (query.continue) {
          const [tokenId, offset] = decodeContinue(query.continue);
          const snap = tokenId !== undefined ? this.snapshots.get(tokenId) : undefined;
          if (!snap) {
            return this.sendJSON(
              res,
              410,
              expired(
                'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
              ),
            );
          }
          snapshot = snap;
          start = offset;
          id = tokenId;
        } else {
          const items = this.services().filter((o) => namespace === undefined || o.metadata.namespace === namespace);
          snapshot = { rv: this.rv, items };
        }
        const end = limit > 0 ? Math.min(start + limit, snapshot.items.length) : snapshot.items.length;
        const metadata: Record<string, unknown> = { resourceVersion: String(snapshot.rv) };
        if (end < snapshot.items.length) {
          if (id === undefined) {
            id = randomUUID();
            this.snapshots.set(id, { ...snapshot, generation: this.compactions });
          }
          metadata.continue = encodeContinue(id, end);
          metadata.remainingItemCount = snapshot.items.length - end;
        }
        return this.sendJSON(res, 200, { kind: 'ServiceList', apiVersion: 'v1', metadata, items: snapshot.items.slice(start, end) });
      }
    }
  }

  private typed(obj: KubeObject, plural: string, version: ServedVersion): KubeObject {
    return { kind: RESOURCES[plural]!.kind, apiVersion: `${GROUP}/${version}`, ...clone(obj) };
  }

  private sendJSON(res: http.ServerResponse, code: number, body: unknown): void {
    const text = JSON.stringify(body);
    const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) };
    // A Status naming a wait carries it as Retry-After too, as kube-apiserver writes every error
    // (responsewriters.ErrorNegotiated): what client-go reads.
    const retryAfter = (body as Partial<Status> | undefined)?.details?.retryAfterSeconds;
    if ((body as Partial<Status> | undefined)?.kind === 'Status' && typeof retryAfter === 'number' && retryAfter > 0) {
      headers['Retry-After'] = String(retryAfter);
    }
    res.writeHead(code, headers);
    res.end(text);
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function encodeContinue(id: string, offset: number): string {
  return Buffer.from(JSON.stringify({ id, offset })).toString('base64');
}

function decodeContinue(token: string): [string | undefined, number] {
  try {
    const v = JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as { id?: unknown; offset?: unknown };
    if (typeof v.id === 'string' && typeof v.offset === 'number') return [v.id, v.offset];
  } catch {
    // fall through
  }
  return [undefined, 0];
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
