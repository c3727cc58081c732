// Errors of the Kubernetes store that are not allocator errors.
//
// client-node's ApiException puts the response headers into its message; this store never lets
// one escape. What the caller gets is a KubernetesApiError: the verb, the object, the HTTP status
// and the server's Status (reason + message) — never request or response headers, never the
// token. It deliberately does not extend IPAllocatorError: store errors "pass through".
//
// Its `code` is the HTTP status (a number, or undefined when no answer arrived), not an
// `ERR_…` string like the IPAllocatorError classes: it is the field client-node's ApiException
// and metav1.Status use for the status, so code written against client-node (`e.code === 409`)
// reads it unchanged. Kubernetes' own stable string is `reason` (metav1.StatusReason:
// `AlreadyExists`, `Invalid`, `InternalError`, …); the class itself is told apart by `name`
// ('KubernetesApiError') or instanceof.
//
// SyncTimeoutError, SyncDeniedError and SyncBlockedError are ours (IPAllocatorErrors with stable
// codes): waitForSync's timeout ran out, the runtime denied the list a permission, or fetch refuses
// the server's port.
import { AlreadyExistsError, errorJSON, IPAllocatorError, NotFoundError, nameErrorClasses } from '../errors.ts';
import { showUnseen } from '../quote.ts';
import { cutMessage, describeErrorBody } from './bodies.ts';

/** metav1.Status, as far as this store reads it; a field of another type in the answer is left out. */
export interface ApiStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; group?: string; kind?: string; uid?: string; retryAfterSeconds?: number };
}

export class KubernetesApiError extends Error {
  /**
   * HTTP status, or undefined when no answer arrived (connection refused, reset, …). A number,
   * as on client-node's ApiException and in metav1.Status, unlike the `ERR_…` codes of
   * IPAllocatorError; `reason` is the stable string.
   */
  readonly code: number | undefined;
  /** Status.reason, e.g. InternalError, ServiceUnavailable, Invalid. */
  readonly reason: string | undefined;
  /** The server's Status object when the body was one. */
  readonly status: ApiStatus | undefined;
  readonly verb: string;
  /** The object name (the address), or undefined for list/watch. */
  readonly resourceName: string | undefined;
  /**
   * Set when no answer arrived within the request timeout: that timeout, in ms (`code` is then
   * undefined). The request may still have reached the server: a timed-out create may have
   * created the object.
   */
  readonly timeoutMs: number | undefined;
  /**
   * Set when the request was given up after being sent again as often as allowed (10 times, as
   * client-go), each time after the wait the server asked for (a 429, or a 5xx with Retry-After):
   * how many times it was sent again — 10, or 11 for a get or list page also sent once more at once
   * because its connection closed before any answer. `code`, `reason` and `status` are then those
   * of the last answer.
   */
  readonly resends: number | undefined;
  /**
   * Set when the answer's body went on past 128 MiB (more than any answer of the API server
   * holds) and was not read further: that answer's HTTP status. `code` is then undefined: nothing
   * of the answer was read.
   */
  readonly cutOffStatus: number | undefined;

  constructor(
    verb: string,
    resource: string,
    name: string | undefined,
    code: number | undefined,
    status: ApiStatus | undefined,
    detail: string,
    cause?: unknown,
    timeoutMs?: number,
    resends?: number,
    cutOffStatus?: number,
  ) {
    const target = name === undefined ? resource : `${resource} "${name}"`;
    super(`${verb} ${target}: ${detail}`, cause === undefined ? undefined : { cause });
    this.name = 'KubernetesApiError';
    this.code = code;
    this.reason = status?.reason;
    this.status = status;
    this.verb = verb;
    this.resourceName = name;
    this.timeoutMs = timeoutMs;
    this.resends = resends;
    this.cutOffStatus = cutOffStatus;
  }

  /**
   * What `JSON.stringify` writes for the error, for a log line, as for the IPAllocatorError
   * classes: its `name`, `message` and `code` (the HTTP status; left out when no answer came),
   * then its fields that are set — `reason`, `status` (the server's Status, field by field),
   * `verb`, `resourceName`, `timeoutMs`, `resends`, `cutOffStatus` — and any you set on it, then
   * its `cause` (name, message and code) when it has one; never its `stack`. It never throws.
   */
  toJSON(this: object): { name: string; message: string; code: number | undefined; cause?: unknown } & Record<string, unknown>;
  toJSON(this: KubernetesApiError): { name: string; message: string; code: number | undefined; cause?: unknown } & Record<string, unknown> {
    return errorJSON(this);
  }
}

/**
 * A 2xx answer that is not what was asked for, `what` saying what it was (`a malformed body
 * (content type text/html): not JSON`, `an object without a kind`, …), and `after` what the
 * request may have done all the same (a create or a delete may have taken effect).
 * @internal
 */
export function malformedAnswer(
  verb: string,
  resource: string,
  name: string | undefined,
  what: string,
  after?: string,
): KubernetesApiError {
  const tail = after === undefined ? '' : ` (${after})`;
  return new KubernetesApiError(verb, resource, name, undefined, undefined, `the API server answered with ${what}${tail}`);
}

/**
 * `waitForSync({ timeoutMs })` ran out before the first complete list arrived — typically an
 * unreachable or refusing API server; `lastError` (also the `cause`) says what the last list or
 * watch attempt met. The informer keeps retrying; a later waitForSync can still succeed.
 */
export class SyncTimeoutError extends IPAllocatorError {
  static override readonly code = 'ERR_SYNC_TIMEOUT' as const;
  declare readonly code: 'ERR_SYNC_TIMEOUT';
  /** What was waited for, e.g. `KubernetesStore`. */
  readonly target: string;
  readonly timeoutMs: number;
  /** The last list/watch failure before the timeout, if any. */
  readonly lastError: Error | undefined;
  constructor(target: string, resource: string, timeoutMs: number, lastError: Error | undefined) {
    const last = lastError === undefined ? 'no list answered yet' : `last error: ${lastError.message}`;
    super(`${target}: ${resource} not synced after waiting ${timeoutMs} ms (${last})`);
    this.target = target;
    this.timeoutMs = timeoutMs;
    this.lastError = lastError;
    if (lastError !== undefined) this.cause = lastError;
  }
}
nameErrorClasses({ SyncTimeoutError });

/**
 * `waitForSync()` met a permission the runtime denies before the first complete list — Deno
 * without `--allow-net` (or `--allow-sys`, `--allow-read`, `--allow-run`, … whatever the request
 * needed): every retry is denied alike until the permission is granted, so waiting on would wait
 * for ever. `flag` is the flag Deno names; `lastError` (also the `cause`) the failed list. The
 * informer keeps retrying all the same (a permission granted meanwhile, through
 * `Deno.permissions.request`, is used), and a waitForSync after a successful list resolves.
 */
export class SyncDeniedError extends IPAllocatorError {
  static override readonly code = 'ERR_SYNC_DENIED' as const;
  declare readonly code: 'ERR_SYNC_DENIED';
  /** What was waited for, e.g. `KubernetesStore`. */
  readonly target: string;
  /** The flag that grants the permission, as Deno names it (`--allow-net`); undefined when its words name none. */
  readonly flag: string | undefined;
  /** The failed list: its message quotes Deno's refusal. */
  readonly lastError: Error;
  constructor(target: string, resource: string, denied: string, lastError: Error) {
    // the flag of Deno's sentence ("…, run again with the --allow-net flag"), not a look-alike
    // inside the name it quotes before it (a host xn--allow-all.example)
    const flag = /run again with the (--allow-[a-z]+) flag$/.exec(denied)?.[1];
    const grant = flag === undefined ? 'grant the permission it names' : `run with ${flag}`;
    super(
      `${target}: ${resource} not synced: Deno denies the list a permission it needs, on every retry until it is granted: ` +
        `${grant} (last error: ${lastError.message})`,
    );
    this.target = target;
    this.flag = flag;
    this.lastError = lastError;
    this.cause = lastError;
  }
}
nameErrorClasses({ SyncDeniedError });

/**
 * `waitForSync()` met a list that no retry can change, as the kubeconfig and the environment were
 * read: the API server's URL has a port fetch never connects to (`http://10.0.0.1:6000`, one of
 * the Fetch standard's "bad ports"), or its proxy is one no request can go through (a proxy-url or
 * HTTPS_PROXY of another scheme than http://, https://, socks5:// and socks5h://, or no URL at
 * all). The list was not sent and none will be: the informer does not list again, and every later
 * waitForSync rejects the same way at once. `lastError` (also the `cause`) is that list's failure,
 * whose message says why and what to do.
 */
export class SyncBlockedError extends IPAllocatorError {
  static override readonly code = 'ERR_SYNC_BLOCKED' as const;
  declare readonly code: 'ERR_SYNC_BLOCKED';
  /** What was waited for, e.g. `KubernetesStore`. */
  readonly target: string;
  /** The API server, as messages show it (no credentials, query or fragment). */
  readonly server: string | undefined;
  /** The port fetch refuses, as the URL writes it (`6000`), when that is why; undefined for a proxy. */
  readonly port: string | undefined;
  /** The failed list: its message says why no request can be sent. */
  readonly lastError: Error;
  constructor(target: string, resource: string, server: string | undefined, port: string | undefined, lastError: Error) {
    super(`${target}: ${resource} not synced, and not listed again: ${lastError.message}`);
    this.target = target;
    this.server = server;
    this.port = port;
    this.lastError = lastError;
    this.cause = lastError;
  }
}
nameErrorClasses({ SyncBlockedError });

/**
 * The Fetch standard's "bad ports" (https://fetch.spec.whatwg.org/#bad-port): fetch — undici's,
 * which client-node 2.x sends every request with under Node and Deno, and Deno's own — fails a
 * request to an http(s):// URL on one of them before connecting, whatever is listening there.
 * kubectl (Go's net/http) has no such list.
 */
const BAD_PORTS = new Set(
  (
    '1 7 9 11 13 15 17 19 20 21 22 23 25 37 42 43 53 69 77 79 87 95 101 102 103 104 109 110 ' +
    '111 113 115 117 119 123 135 137 139 143 161 179 389 427 465 512 513 514 515 526 530 531 ' +
    '532 540 548 554 556 563 587 601 636 989 990 993 995 1719 1720 1723 2049 3659 4045 4190 ' +
    '5060 5061 6000 6566 6665 6666 6667 6668 6669 6679 6697 10080'
  ).split(' '),
);

/**
 * The port of `server` when `err` is fetch's refusal of it (undici: "bad port" under "fetch
 * failed"; Deno's fetch: "Requests to port 6000 are blocked"): a failure every retry meets
 * alike, since the URL never changes. Undefined otherwise — a bad port a redirect led to is
 * another URL's, and a client (client-node 1.x's node-fetch) that connects to such a port never
 * fails so.
 * @internal
 */
export function blockedPort(err: unknown, server: string | undefined): string | undefined {
  const port = portOf(server);
  return port !== undefined && BAD_PORTS.has(port) && refusedPort(err) !== undefined ? port : undefined;
}

/**
 * When `err` is fetch's refusal of a bad port and the port of `server` is none (blockedPort would
 * say it otherwise), the API server answered with a redirect there: fetch checks every URL it
 * follows, and its error says neither that a redirect led there nor the URL. The port when the
 * runtime names it (Deno's "Requests to port 1 are blocked"), '' when it does not (undici's "bad
 * port"); undefined for any other failure.
 * @internal
 */
export function redirectedToBlockedPort(err: unknown, server: string | undefined): string | undefined {
  const port = portOf(server);
  return port === undefined || BAD_PORTS.has(port) ? undefined : refusedPort(err);
}

/**
 * What `subject` (the API server, as a message names it) did when redirectedToBlockedPort says
 * `port`, and what that means: the redirect's URL is named when `location` (redirectLocation)
 * holds it, without its user, password, query or fragment (a login page's may carry a token).
 * @internal
 */
export function blockedRedirectWhy(subject: string, port: string, location?: string): string {
  const url = location === undefined ? undefined : parsedUrl(location);
  const to =
    url !== undefined
      ? `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}, on port ${url.port}, a port`
      : `${port === '' ? 'a port' : `port ${port}, a port`}`;
  return (
    `${subject} answered with a redirect to ${to} fetch never connects to, one of the Fetch standard's "bad ports"` +
    `${url === undefined ? ' (fetch does not say which URL)' : ''}; ` +
    'kube-apiserver does not redirect API requests: something in front of it does (a proxy, a login page), ' +
    'or the kubeconfig names another server'
  );
}

/** `text` as a URL; undefined when it is none. */
function parsedUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** The port of a server URL as it writes it ('' for the scheme's default); undefined for no URL. */
function portOf(server: string | undefined): string | undefined {
  if (server === undefined) return undefined;
  try {
    return new URL(server).port;
  } catch {
    return undefined;
  }
}

/**
 * The port fetch refused to connect to, when `err` is that refusal: as Deno's fetch names it
 * ("Requests to port 6000 are blocked"), '' for undici's "bad port", which names none; else undefined.
 */
function refusedPort(err: unknown): string | undefined {
  for (const { message } of causeChain(err)) {
    if (typeof message !== 'string') continue;
    if (message === 'bad port') return '';
    const deno = /\bRequests to port (\d+) are blocked\b/.exec(message);
    if (deno !== null) return deno[1]!;
  }
  return undefined;
}

/** Why a request to a server on `port`, which fetch refuses (blockedPort), cannot be sent, and what to do. @internal */
export function blockedPortWhy(port: string): string {
  return (
    `fetch never connects to port ${port}, one of the Fetch standard's "bad ports", so no request to this server can be sent; ` +
    'kubectl, which has no such list, reaches it: serve the API server on another port, or point the kubeconfig at one ' +
    'that forwards to it (`kubectl proxy` serves http://127.0.0.1:8001)'
  );
}

function parseStatus(body: unknown): ApiStatus | undefined {
  let v: unknown = body;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      return undefined;
    }
  }
  if (typeof v !== 'object' || v === null || !('reason' in v || 'status' in v || 'code' in v)) return undefined;
  // a field of the wrong type (a message that is a number, a reason that is an object) is left
  // out: every reader of a Status, the command line's included, takes them for what ApiStatus says
  const status: { [key: string]: unknown; code?: unknown; details?: unknown } = { ...v };
  for (const key of ['kind', 'status', 'message', 'reason']) if (key in status && typeof status[key] !== 'string') delete status[key];
  if ('code' in status && typeof status.code !== 'number') delete status.code;
  if ('details' in status && (typeof status.details !== 'object' || status.details === null)) delete status.details;
  return status as ApiStatus;
}

/** HTTP status of a client-node ApiException or a watch error; undefined for transport errors. @internal */
export function httpCode(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown; body?: unknown; headers?: unknown };
  if (typeof e.code === 'number' && e.code >= 100 && e.code < 600 && 'body' in e) return e.code;
  if (typeof e.statusCode === 'number') return e.statusCode;
  return undefined;
}

/**
 * The origin a failed request was last sent to when a redirect took it away from the API server
 * (`http://sso.example:8443`), by the error it failed with: client-node 2.x's fetch follows a
 * redirect, and its answer does not say where it ended (IsomorphicFetchHttpLibrary drops the
 * response's url). Noted by ApiRequests (requests.ts), which sees each hop; read by the messages
 * that name the host (`answeredBy`).
 */
const redirects = new WeakMap<object, string>();

/** Notes that the request that failed with `err` was redirected to `origin`, another than the API server's. @internal */
export function noteRedirect(err: unknown, origin: string): void {
  if (typeof err === 'object' && err !== null) redirects.set(err, origin);
}

/** The origin the request that failed with `err` was redirected to (noteRedirect), else undefined. @internal */
export function redirectedTo(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null ? redirects.get(err) : undefined;
}

/**
 * The URL a redirect named when the request that failed was not sent on there (fetch refuses a
 * port it never connects to before saying where), by the error it failed with: noted by
 * ApiRequests from the Location of the answer (client-node 2.x; 1.x's node-fetch has no such
 * refusal), read by blockedRedirectWhy's callers.
 */
const redirectLocations = new WeakMap<object, string>();

/** Notes that the request that failed with `err` was last answered with a redirect to `location`. @internal */
export function noteRedirectLocation(err: unknown, location: string): void {
  if (typeof err === 'object' && err !== null) redirectLocations.set(err, location);
}

/**
 * The URL the redirect named that the request failed with `err` (or one of its causes) was last
 * answered with (noteRedirectLocation), else undefined.
 * @internal
 */
export function redirectLocation(err: unknown): string | undefined {
  return causeChain(err)
    .map((e) => redirectLocations.get(e))
    .find((location) => location !== undefined);
}

/**
 * The kubeconfig a failed request was made with, as messages name it (`context "x" of the
 * kubeconfig "/path"`: config.ts kubeconfigInUse), by the error it failed with: noted by
 * ApiRequests and the watch (noteKubeconfig) where the store loaded the kubeconfig itself, and
 * read by translate for a failure the kubeconfig caused (its user's credentials), as the command
 * line names the file to correct.
 */
const kubeconfigs = new WeakMap<object, string>();

/** Notes that the request that failed with `err` was made with the kubeconfig `inUse` (config.ts kubeconfigInUse), when known. @internal */
export function noteKubeconfig(err: unknown, inUse: string | undefined): void {
  if (inUse !== undefined && typeof err === 'object' && err !== null) kubeconfigs.set(err, inUse);
}

/**
 * The failures of a read (a get, a list page, a watch) sent once more because its connection
 * closed before any answer (requests.ts closedUnanswered) whose second send met the same: noted
 * by ApiRequests and the watch (noteClosedTwice), read by translate, whose message says so —
 * something closes connections as requests arrive on them, not only an idle one now and then.
 */
const closedTwice = new WeakSet<object>();

/** Notes that the read that failed with `err` was sent twice, and its connection closed before any answer both times. @internal */
export function noteClosedTwice(err: unknown): void {
  if (typeof err === 'object' && err !== null) closedTwice.add(err);
}

/**
 * The failures of a read sent once more because its connection closed before any answer whose
 * second send failed otherwise (a connection refused, a 5xx): each with the first send's failure,
 * noted by ApiRequests and the watch (noteClosedFirst), read by translate, whose message says both
 * — the second failure alone would read as a request sent once.
 */
const closedFirst = new WeakMap<object, unknown>();

/**
 * Notes that the read that failed with `err` on its second send had met, on its first, its
 * connection closed before any answer: `first`, that send's failure.
 * @internal
 */
export function noteClosedFirst(err: unknown, first: unknown): void {
  if (typeof err === 'object' && err !== null) closedFirst.set(err, first);
}

/** How the failure of a read sent twice begins (noteClosedTwice, noteClosedFirst); '' for one sent once. */
function sentTwice(err: unknown): string {
  if (typeof err !== 'object' || err === null) return '';
  if (closedTwice.has(err)) return CLOSED_TWICE;
  if (!closedFirst.has(err)) return '';
  return closedTheFirstTime(closedFirst.get(err));
}

/**
 * How the failure of a read's second send begins when its first send's connection closed before
 * any answer (`first`, that send's failure): the errors translate makes say it so (noteClosedFirst),
 * and so do those ApiRequests makes itself (its deadline, its giving up).
 * @internal
 */
export function closedTheFirstTime(first: unknown): string {
  return `sent twice, its connection closed before any answer the first time (${messages(first)}); the second time: `;
}

/**
 * What a read's failure says of a send whose connection closed before any answer: after the
 * second could not go out (the kubeconfig's TLS material or proxy), and on giving up after the
 * server's waits (`when`: which send it was, e.g. ` on send 3 of 12`). `first`, that send's failure.
 * @internal
 */
export function closedBeforeAnyAnswer(first: unknown, when = ''): string {
  return `its connection closed before any answer${when} (${messages(first)})`;
}

/** The first send's failure of a read whose second send was answered (noteClosedFirst): the cause of the error that says so. */
function firstSendFailure(err: unknown): unknown {
  const first = typeof err === 'object' && err !== null ? closedFirst.get(err) : undefined;
  return quotesCredential(first) ? undefined : first;
}

/**
 * Who a message names as the host that answered (or did not): `the API server at <server>`, or,
 * after a redirect to another origin, `<origin>, where the API server at <server> redirected the
 * request` (`the API server` alone without `server`).
 * @internal
 */
export function answeredBy(origin: string | undefined, server: string | undefined): string {
  const apiServer = server === undefined ? 'the API server' : `the API server at ${server}`;
  return origin === undefined ? apiServer : `${origin}, where ${apiServer} redirected the request`;
}

/**
 * Converts anything a client-node call threw into a header-free error:
 * 409 AlreadyExists on create → AlreadyExistsError; 404 on delete/get of the object →
 * NotFoundError; everything else → KubernetesApiError. Errors of ours (a timed-out request's
 * KubernetesApiError, ErrDestroyed from close()) pass through unchanged.
 *
 * A 404 that names no object (its Status has no details.name, or there is no Status) is the
 * server saying it does not serve the resource at that API version — a cluster before
 * Kubernetes 1.33 serves networking.k8s.io v1beta1 only — not that the object is missing: it is
 * a KubernetesApiError saying so, never a NotFoundError (get would read it as "no such address").
 *
 * A failure without an HTTP status says the error and its causes, then the server when given
 * (`server`: as messages show it, shownServer — no credentials, query or fragment): e.g. `list
 * ipaddresses.networking.k8s.io: fetch failed: connect ECONNREFUSED 127.0.0.1:6443 (the API server
 * at https://127.0.0.1:6443)` — unless it failed on the user's credentials (an exec plugin's, say),
 * before anything was sent. A server on a port fetch never connects to (blockedPort) is said why,
 * and so is a redirect to one whose Location was seen (redirectLocation).
 *
 * A request a redirect took to another host (noteRedirect) fails with a KubernetesApiError naming
 * that host (answeredBy): its 404 or 409 says nothing of the object, and is never a NotFoundError
 * or an AlreadyExistsError.
 * @internal
 */
export function translate(
  err: unknown,
  verb: 'create' | 'delete' | 'get' | 'list' | 'watch',
  resource: string,
  name?: string,
  server?: string,
): Error {
  if (err instanceof KubernetesApiError || err instanceof IPAllocatorError) return err;
  const code = httpCode(err);
  // answered by a host a redirect led to (a login page's), not by the API server: its 404 or 409
  // says nothing about the object, and it is named
  const elsewhere = redirectedTo(err);
  if (code !== undefined && elsewhere !== undefined) {
    const body = (err as { body?: unknown }).body;
    const status = parseStatus(body);
    const answer = describeAnswer(code, status, body, headersOf(err));
    const detail = `${sentTwice(err)}${answer} (answered by ${answeredBy(elsewhere, server)})`;
    return new KubernetesApiError(verb, resource, name, code, status, detail, firstSendFailure(err));
  }
  if (code !== undefined) {
    const body = (err as { body?: unknown }).body;
    const status = parseStatus(body) ?? (code === 401 ? UNAUTHORIZED : undefined);
    if (verb === 'create' && code === 409 && (status?.reason === undefined || status.reason === 'AlreadyExists') && name !== undefined) {
      return new AlreadyExistsError(name);
    }
    if (code === 404 && !namesObject(status)) {
      return new KubernetesApiError(
        verb,
        resource,
        name,
        code,
        status,
        `${sentTwice(err)}HTTP 404: the API server does not serve ${resource} at the API version asked for ` +
          `(networking.k8s.io/v1 from Kubernetes 1.33; 1.31 and 1.32 serve v1beta1 when enabled: apiVersion: 'v1beta1')` +
          (status === undefined && body !== undefined ? `; the answer came ${describeErrorBody(body, headersOf(err))}` : ''),
        firstSendFailure(err),
      );
    }
    if ((verb === 'delete' || verb === 'get') && code === 404 && name !== undefined) return new NotFoundError(name);
    const detail = `${sentTwice(err)}${describeAnswer(code, status, body, headersOf(err))}`;
    return new KubernetesApiError(verb, resource, name, code, status, detail, firstSendFailure(err));
  }
  // No HTTP status: the connection refused or reset, a host not found, a port fetch will not use,
  // the runtime's refusal, a watch ended or never answered. fetch says only "fetch failed" (or
  // "terminated"); why lies in its causes, where a reader of the message would not look: they are
  // said after it, as the command line says them (messages), and the server is named. The cause is
  // kept (it holds no headers).
  const said = messages(err);
  const denied = deniedByRuntime(err); // it may lie deeper than messages reads
  const reason = denied === undefined || said.includes(denied) ? said : `${said}: ${denied}`;
  // a request that failed on the user's credentials was never sent: no server to name, and the
  // kubeconfig to correct named when known, as the command line names it
  const credentials = credentialsFailed(err);
  const where = credentials || (server === undefined && elsewhere === undefined) ? '' : ` (${answeredBy(elsewhere, server)})`;
  const inUse = credentials && typeof err === 'object' && err !== null ? kubeconfigs.get(err) : undefined;
  const of = inUse === undefined ? '' : `cannot use ${inUse}: `;
  // an error whose message may quote a credential is not kept as the cause, which Node prints
  // with an uncaught error (and console.error with any error)
  const cause = quotesCredential(err) ? undefined : err;
  // a port fetch never connects to: said why, since no retry would change it; the API server's
  // own, or the one of a redirect whose Location was seen (requests.ts noteRedirectLocation)
  const port = elsewhere === undefined ? blockedPort(err, server) : undefined;
  const location = redirectLocation(err);
  const redirectedPort =
    elsewhere === undefined && port === undefined && location !== undefined ? redirectedToBlockedPort(err, server) : undefined;
  const why =
    port !== undefined
      ? `: ${blockedPortWhy(port)}`
      : redirectedPort !== undefined
        ? `: ${blockedRedirectWhy('the API server', redirectedPort, location)}`
        : '';
  return new KubernetesApiError(verb, resource, name, undefined, undefined, `${of}${sentTwice(err)}${reason}${where}${why}`, cause);
}

/** How the failure of a read closed twice (noteClosedTwice) begins. */
const CLOSED_TWICE = 'sent twice, its connection closed before any answer both times: ';

/** One error of a cause chain, with the fields the readings of a failure look at. @internal */
export type ErrorLink = { code?: unknown; name?: unknown; message?: unknown; path?: unknown; constructor?: { name?: unknown } };

/**
 * An error and its causes, outermost first, at most `max` of them: how far every reading of a
 * request's failure looks (fetch wraps the socket's error a few causes deep). The one walk of a
 * `cause` chain here, in tls-material.ts, the informer and the command line.
 * @internal
 */
export function causeChain(err: unknown, max = 6): ErrorLink[] {
  const chain: ErrorLink[] = [];
  for (let e: unknown = err; chain.length < max && typeof e === 'object' && e !== null; e = (e as { cause?: unknown }).cause) {
    chain.push(e as ErrorLink);
  }
  return chain;
}

/**
 * The runtime's refusal somewhere in an error's causes, as it words it: Deno's NotCapable
 * (`Requires net access to "10.0.0.1:6443", run again with the --allow-net flag`) lies a few
 * causes deep under fetch's "fetch failed", where a reader would not look. node-fetch (client-node
 * 1.x) keeps no cause: its FetchError holds the refusal only as the reason its message gives.
 * @internal
 */
export function deniedByRuntime(err: unknown): string | undefined {
  for (const { name, message } of causeChain(err)) {
    if (typeof message !== 'string') continue;
    if (name === 'NotCapable' || name === 'PermissionDenied') return message.split('\n')[0];
    if (name === 'FetchError') {
      const refused = NODE_FETCH_DENIED.exec(message.split('\n')[0]!);
      if (refused !== null) return refused[1];
    }
  }
  return undefined;
}

/** node-fetch's "request to <URL> failed, reason: <why>" where <why> is Deno's refusal of a permission. */
const NODE_FETCH_DENIED = /^request to \S+ failed, reason: (Requires [a-z]+ access\b.*, run again with the --allow-[a-z]+ flag)$/;

/**
 * An error and its causes as one line: the first line of each message, joined with ": " ("fetch
 * failed: bad port"), each code once in parentheses. Never headers: the errors without an HTTP
 * status hold none. What translate and the command line say of a failure without an HTTP status.
 * A SyntaxError is named, never quoted: JSON.parse's message quotes the text it was given, and
 * client-node parses an exec credential plugin's output so — a plugin printing a bare token
 * would have the token in the message.
 * @internal
 */
export function messages(err: unknown): string {
  const parts: string[] = [];
  for (const e of causeChain(err, 4)) {
    const { message, code, name } = e;
    const text =
      name === 'SyntaxError'
        ? (execOutputNotJson(e) ?? 'a text that is not JSON (not quoted: it may hold a credential)')
        : isInvalidHeader(e)
          ? INVALID_HEADER
          : isNoExecCredential(e)
            ? NO_EXEC_CREDENTIAL
            : isAuthProviderCommandFailure(e)
              ? AUTH_PROVIDER_COMMAND_FAILED
              : isOidcRefreshFailure(e)
                ? OIDC_REFRESH_FAILED
                : execPluginFailure(e) !== undefined
                  ? `the user's credentials could not be read: its exec plugin ${execPluginFailure(e)}`
                  : code === 'ERR_SSL_WRONG_VERSION_NUMBER'
                    ? NOT_TLS
                    : typeof message === 'string'
                      ? opensslReason((name === 'FetchError' ? nodeFetchWords(message) : message).split('\n')[0]!.trim())
                      : '';
    // undici refuses a control character as it sends, under fetch's "fetch failed": the request was
    // never sent, which is all there is to say (as of the refusals fetch makes before sending)
    if (text === INVALID_HEADER) return INVALID_HEADER;
    // openid-client's code says nothing the sentence does not
    const withCode = typeof code === 'string' && !text.includes(code) && text !== OIDC_REFRESH_FAILED ? `${text} (${code})` : text;
    if (withCode !== '' && !parts.includes(withCode)) parts.push(withCode);
    if (text === AUTH_PROVIDER_COMMAND_FAILED) break; // its cause, execSync's error, quotes the command line again
  }
  return parts.length > 0 ? parts.join(': ') : String(err);
}

/**
 * A message of node-fetch (client-node 1.x sends its requests with it) in fetch's words, as
 * client-node 2.x says the same failure: its "request to <URL> failed, reason: <why>" becomes
 * "fetch failed: <why>", and any other of its messages names a URL without its query or
 * fragment (the request's path and query, a continue token among them, are no part of a
 * message: the server is named after it).
 */
function nodeFetchWords(message: string): string {
  const failed = /^request to \S+ failed, reason: /.exec(message);
  if (failed !== null) return `fetch failed: ${message.slice(failed[0].length)}`;
  // up to the URL's end: a colon right before a space or the end is the message's ("… fetch <URL>: <why>")
  return message.replace(/(https?:\/\/[^\s?#]*)[?#]\S*?(?=:?(?:\s|$))/g, '$1');
}

/**
 * What an https:// server that does not answer in TLS is said as: OpenSSL reads the first bytes
 * of a plain HTTP answer (or of another protocol) as a TLS record of an unknown version.
 * kubectl says "http: server gave HTTP response to HTTPS client".
 */
const NOT_TLS =
  'the server did not answer in TLS (ERR_SSL_WRONG_VERSION_NUMBER): a plain http:// server, or another protocol, on that port?';

/**
 * The reason in an OpenSSL error message, without the thread id, library, function, source file
 * and line around it: "80DC…:error:0A00010B:SSL routines:ssl3_get_record:wrong version
 * number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350:" → "wrong version number".
 * Any other message is returned as it is.
 */
function opensslReason(message: string): string {
  return /^[0-9A-F]+:error:[0-9A-F]+:[^:]*:[^:]*:([^:]+):/.exec(message)?.[1] ?? message;
}

/**
 * fetch's refusal of a header value holding a control character — a CR, LF or NUL (`Headers.append: "Bearer …\r…" is
 * an invalid header value`): its message quotes the value, which is the Authorization header —
 * the bearer token whole — when a token has a line break or a NUL inside it (in the kubeconfig,
 * a token file or an exec plugin's ExecCredential). With client-node 2.x one at the end (a token
 * saved with a Windows line ending) never gets here: fetch strips spaces and line breaks around
 * every header value (the Fetch standard's normalisation), so the token is sent without it, and
 * works; client-node 1.x's node-fetch refuses it here. Checking
 * the token ourselves would mean reading it in three places (kubeconfig, token file, exec
 * plugin), two of them client-node's, where fetch sees every one.
 */
function isInvalidHeader(e: unknown): boolean {
  // Node's undici refuses another control character (DEL, a vertical tab) only as it sends, with
  // an InvalidArgumentError of its own (`invalid authorization header`), fetch's `cause`
  if (e instanceof Error && (e as { code?: unknown }).code === 'UND_ERR_INVALID_ARG' && /^invalid [\w-]+ header$/i.test(e.message)) {
    return true;
  }
  if (!(e instanceof TypeError)) return false;
  // the second: a character beyond U+00FF, which no header may hold (its index would tell the
  // token's length); the fourth: Deno's refusal of a control character; the last: node-fetch's
  // (client-node 1.x), which quotes the value up to its line break: "Bearer <token>"
  return /invalid header|header (?:value|name) is not valid|to a ByteString|failed to parse header value|is not a legal HTTP header/i.test(
    e.message,
  );
}

/** What an invalid header value (isInvalidHeader) is said as: where it comes from, never the value. */
const INVALID_HEADER =
  'the request was not sent: a header would hold a control character (a line break, a NUL, a DEL) ' +
  "or a character beyond U+00FF (not shown: it is the user's credential); the token, password or " +
  "exec plugin credential of the kubeconfig's user entry has one inside it (with " +
  '@kubernetes/client-node 2.x a line break at its end is left out, as its fetch leaves it out of ' +
  'every header; 1.x sends it as it is): remove it';

/**
 * client-node's failure on an exec credential plugin whose output is JSON but no object with a
 * `status` (a JSON string, a number, `{}`): it reads `credential.status.clientCertificateData`
 * (or `.token`, `.expirationTimestamp`) and fails with a TypeError naming neither the plugin nor
 * the user.
 */
function isNoExecCredential(e: unknown): boolean {
  return (
    e instanceof TypeError &&
    /^Cannot read properties of (?:undefined|null) \(reading '(?:clientCertificateData|clientKeyData|token|expirationTimestamp)'\)$/.test(
      e.message,
    )
  );
}

/**
 * client-node's failure to get a credential from an exec credential plugin, as the end of a
 * sentence starting "its exec plugin"; undefined for any other error:
 *   - it could not be started: the error child_process.spawn reports (code ENOENT, EACCES, …;
 *     syscall "spawn <command>", or "spawn" when spawn throws at once, as for ENOTDIR; Deno says
 *     ENOTDIR without a syscall, as "Failed to spawn '<command>': …"), which client-node passes
 *     on as it is — "could not be run: not found (ENOENT)". Its message names
 *     the command (`spawn /usr/bin/x ENOENT`), never its args, which may hold a secret (they are
 *     in `spawnargs`, not read here);
 *   - it exited with a status other than 0: a bare Error whose message is all the plugin wrote on
 *     stderr — "" when it wrote nothing, which was said as "Error" — made in client-node's
 *     exec_auth (the only place its stack starts from). The status itself is not passed on, nor
 *     is the output, which may hold a credential even so (a plugin that prints its
 *     ExecCredential, then fails) — "failed: it exited with a status other than 0 …";
 *   - Deno refused to run it (NotCapable, "Requires run access to …, run again with the
 *     --allow-run flag"): "could not be run: Requires run access …";
 *   - the kubeconfig names no command for it (absent or empty): exec_auth's Error "No command was
 *     specified for exec authProvider!", which would otherwise read as a plugin that failed
 *     saying so — "names no command …";
 *   - its exec entry holds something of the wrong type, or a NUL (`args: "--token=…"` where a
 *     list belongs, `env` a mapping, a command that is a number): a TypeError from exec_auth, or
 *     from spawn called there (ERR_INVALID_ARG_TYPE, ERR_INVALID_ARG_VALUE), whose message quotes
 *     the value — a token among the args — "could not be run: its exec entry … is malformed".
 *     The one TypeError of exec_auth about the plugin's output (isNoExecCredential) is not this.
 * @internal
 */
export function execPluginFailure(e: unknown): string | undefined {
  if (!(e instanceof Error)) return undefined;
  if (e.name === 'NotCapable' && e.message.startsWith('Requires run access')) return `could not be run: ${e.message.split('\n')[0]}`;
  const { code, syscall, path } = e as { code?: unknown; syscall?: unknown; path?: unknown };
  // Deno reports some failures (ENOTDIR) without a syscall, in words of its own
  const spawned = typeof syscall === 'string' ? /^spawn(?: |$)/.test(syscall) : /^Failed to spawn '/.test(e.message);
  if (typeof code === 'string' && spawned) {
    // a command without a path separator is looked for on the PATH (execvp), as kubectl looks for it
    const onPath = typeof path === 'string' && !/[/\\]/.test(path) ? ' on the PATH' : '';
    const why =
      code === 'ENOENT'
        ? `not found${onPath} (ENOENT)`
        : code === 'ENOTDIR'
          ? 'not found (ENOTDIR: a part of its path is a file, not a directory)'
          : code === 'EACCES'
            ? 'not permitted (EACCES: a directory, or a file without permission to execute it)'
            : `the system refused to start it (${code})`;
    return `could not be run: ${why}`;
  }
  const frames = (e.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  if (e instanceof TypeError && !isNoExecCredential(e) && frames.some((line) => EXEC_AUTH_FILE.test(line))) return MALFORMED_EXEC_ENTRY;
  if (e.constructor !== Error || code !== undefined) return undefined;
  if (frames[0] === undefined || !EXEC_AUTH_FILE.test(frames[0])) return undefined;
  if (e.message === NO_EXEC_COMMAND) return 'names no command: its exec entry in the kubeconfig needs one, the program to run';
  const said = e.message
    .split('\n')
    .find((line) => line.trim() !== '')
    ?.trim();
  const stderr = said === undefined ? 'wrote nothing on stderr' : wroteOnStderr(e, said);
  return `failed: it exited with a status other than 0 (@kubernetes/client-node does not pass on which) and ${stderr}`;
}

/**
 * An exec credential plugin's output that is no JSON, said without it (a plugin printing a bare
 * token would have it quoted by JSON.parse's message): the SyntaxError client-node's exec_auth
 * throws parsing it. Output that ends before any JSON does — nothing at all, only whitespace, or
 * JSON cut short — is said as such; undefined for a SyntaxError from elsewhere (an answer's body).
 * @internal
 */
export function execOutputNotJson(e: unknown): string | undefined {
  const problem = execOutputProblem(e);
  return problem === undefined ? undefined : `the user's credentials could not be read: its exec plugin ${problem}`;
}

/**
 * What execOutputNotJson says of the plugin, as the end of a sentence starting "its exec plugin":
 * "exited with status 0 but printed nothing (…)", with the first line it wrote on stderr as a
 * failing plugin's is shown (execPluginFailure) — a plugin that cannot log in says why there.
 * @internal
 */
export function execOutputProblem(e: unknown): string | undefined {
  if (!(e instanceof SyntaxError) || !(e.stack ?? '').split('\n').some((line) => /^\s+at /.test(line) && EXEC_AUTH_FILE.test(line))) {
    return undefined;
  }
  const printed = /^Unexpected end of JSON input$/.test(e.message)
    ? 'printed nothing (or only whitespace, or JSON cut short)'
    : 'printed something that is not JSON (not shown: it may be a credential)';
  const said = pluginStderrLine(e);
  const stderr = said === undefined ? '' : ` and ${wroteOnStderr(e, said)}`;
  return `exited with status 0 but ${printed}${stderr}; an exec plugin must print an ExecCredential`;
}

/**
 * What the exec plugin whose run failed with an error wrote on stderr, kept by exec-plugins.ts
 * (client-node keeps stderr only for a plugin that exits with a status other than 0, as the
 * error's message): a plugin that exits 0 printing nothing says why only there. `onTerminal`: it
 * was passed on, as it came, to our stderr, a terminal.
 */
const stderrOfFailure = new WeakMap<object, { stderr: string; onTerminal: boolean }>();

/**
 * Keeps what an exec plugin wrote on stderr with the failure `e` its run ended in, and whether it
 * was passed on to a terminal (`onTerminal`). @internal
 */
export function rememberPluginStderr(e: unknown, stderr: string, onTerminal: boolean): void {
  if (typeof e === 'object' && e !== null && (stderr !== '' || onTerminal)) stderrOfFailure.set(e, { stderr, onTerminal });
}

/** The first line (not blank, trimmed) an exec plugin wrote on stderr before its run failed with `e`, where it was kept. */
function pluginStderrLine(e: unknown): string | undefined {
  const stderr = typeof e === 'object' && e !== null ? stderrOfFailure.get(e)?.stderr : undefined;
  return stderr
    ?.split('\n')
    .find((line) => line.trim() !== '')
    ?.trim();
}

/**
 * `wrote on stderr: ` and `said`, the first line an exec plugin whose run failed with `e` wrote
 * there. Quoted also when all it wrote went on to the process's stderr, a terminal, as it came
 * (exec-plugins.ts): a library's error may be logged far from that terminal. Only a program that
 * shows the error on that same terminal leaves it out (terminalEchoLeftOut).
 */
function wroteOnStderr(e: unknown, said: string): string {
  // shown with every character a reader could not see escaped, as an answer's text is: a
  // plugin's colours or a screen clear must not reach a terminal through a log line
  const quoted = `wrote on stderr: ${showUnseen(cutMessage(said))}`;
  if (typeof e === 'object' && e !== null && stderrOfFailure.get(e)?.onTerminal === true) {
    echoedOnTerminal.delete(quoted);
    echoedOnTerminal.add(quoted);
    if (echoedOnTerminal.size > ECHOES_KEPT) echoedOnTerminal.delete(echoedOnTerminal.values().next().value!);
  }
  return quoted;
}

/** How many of the latest echoedOnTerminal are kept: a process's plugins fail with a few lines at most. */
const ECHOES_KEPT = 16;

/**
 * The words that quote an exec plugin's line on stderr (wroteOnStderr) that went on to the
 * process's stderr, a terminal, as it came: the latest ECHOES_KEPT, oldest first.
 */
const echoedOnTerminal = new Set<string>();

/**
 * `message` for a program that shows it on the terminal that is the process's stderr: where it
 * quotes what an exec plugin wrote on stderr that already went on to that terminal as it came, it
 * says so instead of showing it twice. `message` itself otherwise.
 * @internal
 */
export function terminalEchoLeftOut(message: string): string {
  let shown = message;
  for (const quoted of echoedOnTerminal) {
    shown = shown.replaceAll(quoted, 'wrote on stderr (passed on to the terminal as it came, not repeated here)');
  }
  return shown;
}

/**
 * A stack frame in one of client-node's modules `names` (exec_auth, oidc_auth, …): in its
 * JavaScript file (dist/exec_auth.js), or in the TypeScript source it was built from
 * (src/exec_auth.ts), as a stack reads with source maps applied — node --enable-source-maps, tsx —,
 * which client-node ships.
 */
function clientNodeModule(...names: string[]): RegExp {
  return new RegExp(`[/\\\\](?:${names.join('|')})\\.(?:[cm]?js|ts)\\b`);
}

/** A stack frame in client-node's exec_auth, the module that runs exec credential plugins. */
const EXEC_AUTH_FILE = clientNodeModule('exec_auth');

/** A stack frame in client-node's gcp_auth or azure_auth, which run an auth-provider's cmd-path. */
const COMMAND_AUTH_FILE = clientNodeModule('gcp_auth', 'azure_auth');

/** A stack frame in client-node's oidc_auth, which refreshes an oidc auth-provider's id-token. */
const OIDC_AUTH_FILE = clientNodeModule('oidc_auth');

/** What execPluginFailure says of an exec entry of the wrong shape; never what it holds. */
const MALFORMED_EXEC_ENTRY =
  'could not be run: its exec entry in the kubeconfig is malformed (command must be text, args a ' +
  'list of texts, env a list of name and value texts, none holding a NUL; not shown: it may hold a credential)';

/**
 * Whether the message of an error or of one of its causes may quote a credential, as messages
 * never does: fetch's refusal of a header (isInvalidHeader: the token), JSON.parse's of an exec
 * plugin's output (a SyntaxError: a plugin printing a bare token), spawn's of a malformed exec
 * entry (what it holds: a token among the args), an auth-provider command's failure (its args).
 */
function quotesCredential(err: unknown): boolean {
  return causeChain(err).some(
    (e) =>
      isInvalidHeader(e) || e.name === 'SyntaxError' || execPluginFailure(e) === MALFORMED_EXEC_ENTRY || isAuthProviderCommandFailure(e),
  );
}

/**
 * Whether an error or one of its causes is a failure to get the user's credentials, which comes
 * before anything is sent: an exec credential plugin's (execPluginFailure, execOutputNotJson,
 * isNoExecCredential), an auth-provider command's, an oidc refresh's (isOidcRefreshFailure), or fetch's refusal of a credential that no
 * header may hold (isInvalidHeader).
 */
function credentialsFailed(err: unknown): boolean {
  return causeChain(err).some(
    (e) =>
      execPluginFailure(e) !== undefined ||
      execOutputNotJson(e) !== undefined ||
      isNoExecCredential(e) ||
      isAuthProviderCommandFailure(e) ||
      isOidcRefreshFailure(e) ||
      isInvalidHeader(e),
  );
}

/** client-node's exec_auth's refusal of an exec entry without a command (absent or empty). */
const NO_EXEC_COMMAND = 'No command was specified for exec authProvider!';

/**
 * client-node's failure to run the command of a gcp or azure auth-provider (`cmd-path`, with
 * `cmd-args` appended, run through a shell by execSync): an Error made in gcp_auth or azure_auth,
 * "Failed to refresh token: Error: Command failed: \"<cmd-path>\" <cmd-args>", which quotes the
 * args — a secret may be among them — as does its cause, execSync's error.
 */
function isAuthProviderCommandFailure(e: unknown): boolean {
  if (!(e instanceof Error) || !e.message.startsWith('Failed to refresh token: ')) return false;
  const origin = (e.stack ?? '').split('\n').find((line) => /^\s+at /.test(line));
  return origin !== undefined && COMMAND_AUTH_FILE.test(origin);
}

/**
 * Why client-node cannot refresh the expired id-token of an oidc auth-provider, and what to do, as
 * the end of a sentence "… which this @kubernetes/client-node cannot refresh: …"; `fails`, what its
 * requests do ("fails", "would fail"). Said where the user is refused (auth-providers.ts
 * oidcRefreshProblem) and where a request fails on it (isOidcRefreshFailure).
 * @internal
 */
export function oidcRefreshFailure(fails: string): string {
  return (
    `it gives the idp-issuer-url to openid-client as text, which takes only a URL, and every request ${fails} with its '"server" ` +
    "must be an instance of URL'; kubectl refreshes it, and writes the new id-token into the kubeconfig: run a kubectl command " +
    'with this context, or log in again, or use an exec entry (exec: {…}) that gets a token'
  );
}

/**
 * client-node's failure to refresh an oidc id-token that expired after the user was checked (an
 * expired one is refused before: auth-providers.ts): client-node 1.x and 2.0 give the
 * idp-issuer-url to openid-client 6's discovery() as text, which throws a TypeError before any
 * request, thrown as called from client-node's oidc_auth.
 */
function isOidcRefreshFailure(e: unknown): boolean {
  if (!(e instanceof TypeError) || (e as { code?: unknown }).code !== 'ERR_INVALID_ARG_TYPE') return false;
  if (e.message !== '"server" must be an instance of URL') return false;
  return (e.stack ?? '').split('\n').some((line) => /^\s+at /.test(line) && OIDC_AUTH_FILE.test(line));
}

/** What isOidcRefreshFailure's failure is said as. */
const OIDC_REFRESH_FAILED =
  "the user's credentials could not be read: the id-token of its oidc auth-provider has expired, which this " +
  `@kubernetes/client-node cannot refresh: ${oidcRefreshFailure('fails')}`;

/** What isAuthProviderCommandFailure's failure is said as. */
const AUTH_PROVIDER_COMMAND_FAILED =
  "the user's credentials could not be read: the command of its auth-provider (cmd-path) could not be run or failed " +
  '(its args are not shown: they may hold a credential)';

/** What isNoExecCredential's failure is said as. */
const NO_EXEC_CREDENTIAL =
  "the user's credentials could not be read: its exec plugin printed no ExecCredential " +
  '(JSON without a status object; not shown: it may be a credential); an exec plugin must print an ExecCredential';

/** Whether an error or one of its causes is an invalid header value (isInvalidHeader). @internal */
export function hasInvalidHeader(err: unknown): boolean {
  return causeChain(err).some(isInvalidHeader);
}

/**
 * kube-apiserver's answer to a credential it does not accept (its authentication filter writes
 * this Status for every 401), for the 401s whose body client-node leaves unread.
 */
const UNAUTHORIZED: ApiStatus = Object.freeze({
  kind: 'Status',
  status: 'Failure',
  message: 'Unauthorized',
  reason: 'Unauthorized',
  code: 401,
});

/**
 * Whether a 404's Status names the object that is missing (kube-apiserver writes details.name
 * for it); a 404 that names none — or is not a Status at all — is a path the server does not
 * serve, such as an API version it does not have.
 * @internal
 */
export function namesObject(status: ApiStatus | undefined): boolean {
  return typeof status?.details?.name === 'string' && status.details.name !== '';
}

/**
 * What the server answered, in a few words for a message: `HTTP 503 ServiceUnavailable: <the
 * Status's message>`, or `HTTP 503 Service Unavailable` when the Status says nothing more. An
 * answer whose body is no Status (a proxy's or load balancer's error page, a text/plain line) is
 * described — its content type, its size and its first words — so that a reader can tell that
 * something other than the API server answered. Text from the answer has every character a
 * reader could not see escaped (`\u001b`, `\n`): a hostile body cannot start a line of its own or
 * recolour a terminal. The request's verb and object are not in it (the caller's message names them).
 * @internal
 */
export function describeAnswer(code: number, status: ApiStatus | undefined, body?: unknown, headers?: unknown): string {
  if (status?.message)
    return `HTTP ${code} ${showUnseen(String(status.reason ?? 'Failure'))}: ${showUnseen(cutMessage(String(status.message)))}`;
  const answer = `HTTP ${code} ${statusText(code)}`;
  // no body read (client-node leaves a 401's unread), or a Status that says no more
  return status !== undefined || body === undefined ? answer : `${answer} ${describeErrorBody(body, headers)}`;
}

/** The headers of a client-node ApiException (a plain object), or undefined. */
function headersOf(err: unknown): unknown {
  return (err as { headers?: unknown }).headers;
}

/**
 * The standard reason phrase of an HTTP status as Go's net/http StatusText words it (what kubectl
 * prints), or "error" for a code without one.
 */
function statusText(code: number): string {
  return REASON_PHRASES[code] ?? 'error';
}

const REASON_PHRASES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length Required',
  412: 'Precondition Failed',
  413: 'Request Entity Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Requested Range Not Satisfiable',
  417: 'Expectation Failed',
  421: 'Misdirected Request',
  422: 'Unprocessable Entity',
  423: 'Locked',
  424: 'Failed Dependency',
  425: 'Too Early',
  426: 'Upgrade Required',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  451: 'Unavailable For Legal Reasons',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  505: 'HTTP Version Not Supported',
  506: 'Variant Also Negotiates',
  507: 'Insufficient Storage',
  508: 'Loop Detected',
  510: 'Not Extended',
  511: 'Network Authentication Required',
};
