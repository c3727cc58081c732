// A deadline for every API request, and a way to settle the requests in flight on close().
//
// client-node sets no timeout on its generated API calls: against a server that accepts the
// connection and never answers (a stalled kube-apiserver, a half-open load balancer) a call
// waits for ever. Each call made through ApiRequests gets its own AbortController:
//
//   call ──► RequestContext.setSignal(signal)  (a per-call middleware; the fetch honours it, so
//   │        the connection is dropped, not only the promise — except that undici lets a
//   │        connection still in its TLS handshake run to its own 10 s connect timeout)
//   ├── answer in time ─────────────► resolves / rejects as client-node does
//   ├── timeoutMs passed ───────────► KubernetesApiError "no answer from <server> within N ms"
//   └── abortAll(reason) (close()) ─► rejects with reason() (ErrDestroyed)
//
// The caller's promise settles on the abort itself, not on the fetch noticing it: the signal
// reaches the fetch only after authentication (an exec credential plugin can stall too), and
// the fetch's own rejection (AbortError, or the reason) differs between client-node 1.x
// (node-fetch) and 2.x (undici).
//
// A request the server asks to send again later is, after the wait it names (Retry-After, at
// most 60 s; 0 or below: 200 ms), up to 10 times, within the request's one deadline, as
// client-go does; close() ends the wait too. Asked an eleventh time, it gives up with an error
// that says so and quotes that last answer (not the bare answer, which would read as a single
// failure). Those are a 429 Too Many Requests (API Priority and Fairness on a busy cluster: the
// server turned it away before handling it, so even a create is safe to send again), and any 5xx
// carrying a Retry-After header (kube-apiserver's "please try again" ServerTimeout when etcd is
// unreachable, a proxy's 503) — whatever the verb, as client-go, although a 5xx does not say the
// request went unhandled (a create sent again may meet the object the first one made: 409); a
// 5xx without the header is a failure. A caller that cannot make a repeat safe turns the 5xx
// resend off (run's `resendAfterServerError`: a delete without the uid to make it conditional).
//
// A request that went out and whose answer was lost — its connection dropped or reset, its
// deadline passed after it was sent — or any earlier send of which was answered with a 5xx that
// was waited out, may have taken effect: its error is marked so (answerLost), for a create or delete to
// be read back (store.ts); so may one answered 500, 502, 503 or 504 and not sent again
// (mayHaveTakenEffect). One that failed before it went out — the credentials, the TLS material or
// proxy, a connection refused or a host not found, a TLS handshake, the runtime's refusal — is not.
//
// A get or a list page whose connection closed before any of its answer came is sent once more; a
// create or delete is not: closedUnanswered says when, and why.
//
// A connection reset or closed part-way through an answer fails the request at once, with the
// network error (e.g. `terminated (ECONNRESET)`), under Deno as under Node: see
// `letFetchEndBody`, which watch-request.ts applies to a watch's body too.
//
// An answer's body is read no further than 128 MiB (answer-body.ts, MAX_ANSWER_BODY_BYTES): a
// body that goes on past it fails the request with an error naming it and the cap, and its
// connection is dropped, where client-node would read it whole, without limit.
//
// Watches are not made here: a watch is meant to stay open; the informer gives it deadlines of
// its own (watch-session.ts).
import http from 'node:http';
import https from 'node:https';
import { isReadable } from 'node:stream';
import {
  Observable,
  type ConfigurationOptions,
  type KubeConfig,
  type ObservableMiddleware,
  ResponseContext,
} from '@kubernetes/client-node';
import { cappedBody, type Chunks, MAX_ANSWER_BODY_BYTES, streamingHttpLibrary } from './answer-body.ts';
import { InvalidArgumentError, IPAllocatorError } from '../errors.ts';
import { formatCount, quoteInput, quoteText } from '../quote.ts';
import { kubeconfigInUse } from './config.ts';
import {
  blockedPort,
  causeChain,
  closedBeforeAnyAnswer,
  closedTheFirstTime,
  deniedByRuntime,
  describeAnswer,
  hasInvalidHeader,
  httpCode,
  KubernetesApiError,
  noteClosedFirst,
  noteClosedTwice,
  noteKubeconfig,
  noteRedirect,
  noteRedirectLocation,
  redirectedTo,
  translate,
} from './errors.ts';
import {
  execPluginUser,
  forgetRefusedCredential,
  superviseExecPlugins,
  waitsForAnotherRequestsPlugin,
  withRequestSignal,
} from './exec-plugins.ts';
import { goInt64, MAX_TIMEOUT_MS } from './numbers.ts';
import { closeReusedConnections, type Dispatcher, keepingConnection, sentThrough } from './reused-connections.ts';
import { TLS_CODE, transportProblem } from './tls-material.ts';
import { namingKubeconfig } from './user-checks.ts';

/** The request timeout when none is given: 30 s, client-node's Watch connect timeout. @internal */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** The `requestTimeoutMs` option: undefined → the default; a positive number of ms, or Infinity for none. @internal */
export function requestTimeoutOption(value: unknown, owner: string): number {
  if (value === undefined) return DEFAULT_REQUEST_TIMEOUT_MS;
  if (typeof value === 'number' && value >= 1 && (value <= MAX_TIMEOUT_MS || value === Infinity)) return value;
  throw new InvalidArgumentError(
    `${owner}: requestTimeoutMs must be a number of milliseconds from 1 to ${formatCount(MAX_TIMEOUT_MS)} or Infinity, ` +
      `got ${quoteInput(value)}`,
  );
}

/**
 * How many times a request the server asked to wait (a 429, or a 5xx with Retry-After) is sent
 * again, both counted together: client-go's default (rest.Request maxRetries, one withRetry per
 * request).
 */
const MAX_RETRIES = 10;

/** What a timed-out or aborted request was, for the error. @internal */
export interface RequestTarget {
  verb: 'create' | 'delete' | 'get' | 'list' | 'watch';
  /** e.g. ipaddresses.networking.k8s.io */
  resource: string;
  /** The object name; undefined for a list. */
  name?: string | undefined;
}

/** @internal */
export class ApiRequests {
  private readonly inFlight = new Set<AbortController>();

  /**
   * @param server the API server's URL as messages show it (shownServer: no credentials, query or fragment)
   * @param timeoutMs per request; Infinity for none
   * @param kc the KubeConfig the requests authenticate with: an exec credential plugin it starts
   *   for a request is stopped when that request ends unanswered (exec-plugins.ts), a request
   *   whose deadline passes before it was sent says that the plugin did not answer, and one that
   *   fails on its TLS material or proxy says which field is wrong (tls-material.ts)
   */
  constructor(
    readonly server: string,
    readonly timeoutMs: number,
    private readonly kc?: KubeConfig,
  ) {
    this.stopsPlugins = kc !== undefined && superviseExecPlugins(kc);
  }

  /** Whether an exec plugin started for a request is stopped when the request ends unanswered. */
  readonly stopsPlugins: boolean;

  /**
   * Runs `call`, handing it the client-node options that attach this request's AbortSignal, and
   * again after the server's wait while it answers 429, or a 5xx with a Retry-After header (at
   * most 10 times in all). The deadline covers the whole request, its waits and attempts
   * included, as client-go's does: when it passes, the request rejects with a KubernetesApiError
   * (`timeoutMs` set, its message naming the answers waited out); when aborted first, with the
   * abortAll reason; when the server asks for an eleventh wait, with a KubernetesApiError saying
   * it gave up (`resends` set; code and Status of that last answer); otherwise as `call` does
   * (the caller translates). `onWait` hears each answer
   * that is waited out, translated (its `code` says which: 429 is throttling, a 5xx is not), with
   * the seconds it is waited out for, as it comes (a list's caller reports it meanwhile, and sends
   * nothing before that wait is over even when the deadline ends the request first).
   *
   * A 5xx does not say the request went unhandled: once an earlier attempt was answered with one
   * and waited out, `call` is told, as `serverErrorsWaitedOut`, the answers waited out so far in
   * words (`the server throttled it (429) 2 times and answered 503 3 times with a Retry-After,
   * waited out as it asked`; undefined while no 5xx was among them): that attempt may have taken
   * effect (a delete sent again then names the object it meant, by uid), and a message about the
   * outcome begins with it. With
   * `resendAfterServerError: false` such an answer is final: a request that cannot be made safe
   * to repeat is not sent again.
   *
   * A request that fetch followed to another origin than the API server's (a redirect) is
   * remembered so: `onRedirect` hears that origin when it answers, and an error it fails with is
   * noted (errors.ts noteRedirect), for messages to name the host that answered. So is one a
   * redirect on the API server's origin sent again with another method (a create as a GET):
   * `onRedirect` hears the method (Redirected).
   *
   * A rejection that leaves open whether the request took effect is marked so (answerLost): the
   * deadline passed, or the connection failed, after an attempt went out (not one that failed to
   * connect: wentOut), or after an attempt answered with a 5xx was waited out.
   *
   * A read sent once more because its connection closed before any answer (closedUnanswered)
   * that then fails says how its first send ended too (`sent twice, its connection closed before
   * any answer the first time (…); the second time: …`), whether the error is made here (the
   * deadline) or by the caller's translate (noteClosedFirst, noteClosedTwice). Given up after the
   * server's waits, it counts that resend among the resends and says which send closed so,
   * wherever it came among them (gaveUpError).
   */
  async run<T>(
    target: RequestTarget,
    call: (options: ConfigurationOptions, serverErrorsWaitedOut: string | undefined) => Promise<T>,
    onWait?: (error: KubernetesApiError, seconds: number) => void,
    {
      resendAfterServerError = true,
      onRedirect,
    }: { resendAfterServerError?: boolean; onRedirect?: ((redirect: Redirected) => void) | undefined } = {},
  ): Promise<T> {
    const controller = new AbortController();
    const signal = controller.signal;
    this.inFlight.add(controller);
    const waited: number[] = []; // the status of each answer waited out, in order
    // a read sent once more after its connection closed unanswered: how many answers had been waited out then
    let resentAfterClose: number | undefined;
    let firstClose: unknown; // and the failure of the send whose connection closed so
    // how a failure of the send right after that one begins, saying how the first ended too; '' otherwise
    const closedBefore = (): string => (resentAfterClose === waited.length ? closedTheFirstTime(firstClose) : '');
    // whether the attempt running was sent: client-node runs the middleware after authenticating
    // (an exec credential plugin), just before the fetch; whether it was written on a connection
    // made and secured (`pending` from then on until it failed or was answered in full); and the
    // HTTP status of its answer once that began (status and headers in, the body still to come)
    const attempt: { sent: boolean; pending: boolean; answered?: number | undefined } = { sent: false, pending: false };
    // the answers waited out, in words, once a 5xx (which does not say the request went
    // unhandled) was among them; undefined until then
    const serverErrorsWaitedOut = (): string | undefined =>
      waited.some((code) => code !== 429) ? `the server ${waitedText(waited)}, waited out as it asked` : undefined;
    // where the request was sent and where its last hop went (a redirect may lead elsewhere)
    const route = newRoute();
    let deadline: ReturnType<typeof setTimeout> | undefined;
    if (this.timeoutMs !== Infinity) {
      deadline = setTimeout(() => {
        const redirected = elsewhere(route);
        const error = this.timeoutError(target, waited, attempt, signal, redirected, closedBefore());
        if (attempt.pending || serverErrorsWaitedOut() !== undefined) LOST_ANSWERS.set(error, attempt.answered);
        // the answers waited out came from that host: the messages that name them say so
        if (redirected !== undefined) noteRedirect(error, redirected);
        controller.abort(error);
      }, this.timeoutMs);
    }
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    aborted.catch(() => {}); // an abort between two attempts is seen by the next race, not reported as unhandled
    let wait: ReturnType<typeof setTimeout> | undefined;
    try {
      for (;;) {
        try {
          attempt.sent = false;
          attempt.answered = undefined;
          route.asked = route.last = route.away = route.askedMethod = route.lastMethod = route.location = undefined;
          const answer = await Promise.race([
            withRequestSignal(signal, () =>
              call(
                withSignal(
                  signal,
                  () => (attempt.sent = true),
                  () => (attempt.pending = true),
                  (status) => (attempt.answered = status),
                  (status) => {
                    // the connection is dropped, and the request settles now, on this error
                    const error = bodyTooLarge(target, status);
                    controller.abort(error);
                    return error;
                  },
                  route,
                ),
                serverErrorsWaitedOut(),
              ),
            ),
            aborted,
          ]);
          const redirect = redirected(route);
          if (redirect !== undefined) onRedirect?.(redirect);
          return answer;
        } catch (caught) {
          const began = attempt.answered; // the status of an answer that began, then failed (its body cut)
          attempt.answered = undefined; // that answer is over: a deadline met now is met between attempts
          const pending = attempt.pending;
          attempt.pending = false;
          // the kubeconfig the store loaded itself is named where it kept the request from going out
          const inUse = kubeconfigInUse(this.kc);
          noteKubeconfig(caught, inUse);
          const e = namingKubeconfig(caught, inUse);
          const redirected = elsewhere(route);
          if (redirected !== undefined && !signal.aborted) noteRedirect(e, redirected);
          // a redirect fetch did not follow (a port it never connects to): where it led
          if (route.location !== undefined && !signal.aborted) noteRedirectLocation(e, route.location);
          // credentials refused: an exec plugin's are asked for again by the next request, as
          // client-go's (exec-plugins.ts); this one fails with the 401. Not that of a host a
          // redirect led to, which was never sent them (fetch leaves the Authorization header out)
          const code = e instanceof KubernetesApiError ? e.code : httpCode(e);
          if (code === 401 && redirected === undefined) forgetRefusedCredential(signal);
          const problem = signal.aborted ? undefined : this.transportProblem(e);
          if (problem !== undefined) {
            // the server named as the command line names it: an application's logs may come from several clusters
            const cannotUse = inUse === undefined ? '' : `cannot use ${inUse}: `;
            const host = this.shownHost(redirected);
            const before = serverErrorsWaitedOut();
            // a read sent once more after its connection closed before any answer: that send is said too
            const closed = resentAfterClose === waited.length ? closedBeforeAnyAnswer(firstClose) : undefined;
            const earlier = [before, closed].filter((text) => text !== undefined).join('; ');
            if (earlier === '') throw unansweredError(target, `${cannotUse}${requestNotSent(host, problem)}`, e);
            const error = unansweredError(target, `${earlier}; ${cannotUse}the request to ${host} was not sent again: ${problem}`, e);
            // an earlier send was answered with a 5xx, which does not say it went unhandled: it may have taken effect
            if (before !== undefined) LOST_ANSWERS.set(error, undefined);
            throw error;
          }
          const closedUnread = READS.has(target.verb) && pending && began === undefined && closedUnanswered(e, signal, this.server);
          if (closedUnread && resentAfterClose === undefined) {
            resentAfterClose = waited.length;
            firstClose = e;
            continue;
          }
          // the send right before was that one more: its message says how the first one ended too
          if (resentAfterClose === waited.length && !signal.aborted) {
            if (closedUnread) noteClosedTwice(e);
            else noteClosedFirst(e, firstClose);
          }
          if (!signal.aborted && isFetchFailure(e) && ((pending && wentOut(e, this.server)) || serverErrorsWaitedOut() !== undefined)) {
            LOST_ANSWERS.set(e as object, began);
          }
          const asked = signal.aborted ? undefined : askedWait(e, target);
          if (asked === undefined || (asked.error.code !== 429 && !resendAfterServerError)) throw e;
          if (waited.length === MAX_RETRIES) {
            // the send whose connection closed before any answer, counted from 1, when there was one
            const closed = resentAfterClose === undefined ? undefined : { send: resentAfterClose + 1, failure: firstClose };
            const gaveUp = this.gaveUpError(target, waited, asked.error, e, closed);
            if (redirected !== undefined) noteRedirect(gaveUp, redirected);
            throw gaveUp;
          }
          waited.push(asked.error.code!);
          onWait?.(asked.error, asked.seconds);
          await Promise.race([new Promise<void>((resolve) => (wait = setTimeout(resolve, asked.seconds * 1000))), aborted]);
        }
      }
    } finally {
      if (deadline !== undefined) clearTimeout(deadline);
      if (wait !== undefined) clearTimeout(wait);
      signal.removeEventListener('abort', onAbort!);
      this.inFlight.delete(controller);
    }
  }

  /**
   * The request sent again as often as allowed and answered with one more wait: given up, with
   * the last answer's code and Status, and a message that says so — e.g. `get … "10.96.0.10":
   * gave up after 10 resends (the server throttled it (429) 10 times, each waited out as it
   * asked); the last answer: HTTP 429 TooManyRequests: …`. A read also sent once more at once
   * because its connection closed before any answer (`closed`: which send, counted from 1, and
   * its failure) counts that resend too, and says which send it was: `gave up after 11 resends
   * (the server throttled it (429) 10 times, each waited out as it asked; its connection closed
   * before any answer on send 3 of 12 (fetch failed: other side closed …), and it was sent again
   * at once); …`.
   */
  private gaveUpError(
    target: RequestTarget,
    waited: readonly number[],
    last: KubernetesApiError,
    answer: unknown,
    closed: { send: number; failure: unknown } | undefined,
  ): KubernetesApiError {
    const { body, headers } = answer as { body?: unknown; headers?: unknown };
    const resends = waited.length + (closed === undefined ? 0 : 1);
    const close =
      closed === undefined
        ? ''
        : `; ${closedBeforeAnyAnswer(closed.failure, ` on send ${closed.send} of ${resends + 1}`)}, and it was sent again at once`;
    return new KubernetesApiError(
      target.verb,
      target.resource,
      target.name,
      last.code,
      last.status,
      `gave up after ${resends} resends (the server ${waitedText(waited)}, each waited out as it asked${close}); ` +
        `the last answer: ${describeAnswer(last.code!, last.status, body, headers)}`,
      undefined,
      undefined,
      resends,
    );
  }

  /**
   * What is wrong with the KubeConfig's TLS material or proxy when a failure without an HTTP
   * status came from it (tls-material.ts), else undefined: said as such rather than as the API
   * server out of reach.
   */
  private transportProblem(err: unknown): string | undefined {
    if (this.kc === undefined || err instanceof KubernetesApiError || httpCode(err) !== undefined) return undefined;
    return transportProblem(this.kc, err);
  }

  /**
   * The host a message names for a request that failed or went unanswered: the API server
   * (`https://10.0.0.1:6443`, as `server` shows it), or the origin a redirect took the request to
   * (`https://sso.example (where https://10.0.0.1:6443 redirected the request)`).
   */
  private shownHost(redirected: string | undefined): string {
    return redirected === undefined ? this.server : `${redirected} (where ${this.server} redirected the request)`;
  }

  /** Aborts every request in flight: each rejects with its own `reason()`, and its connection is dropped. */
  abortAll(reason: () => Error): void {
    for (const controller of [...this.inFlight]) controller.abort(reason());
  }

  /**
   * Closes the connections the requests sent with this KubeConfig keep open for the next ones
   * (reused-connections.ts), once the owner is done with them: watches and requests alike. None
   * is opened afterwards: a request that would (still authenticating) fails with `reason()`.
   */
  closeConnections(reason: () => Error): void {
    if (this.kc !== undefined) closeReusedConnections(this.kc, reason);
  }

  private timeoutError(
    target: RequestTarget,
    waited: readonly number[],
    { sent, answered }: { sent: boolean; answered?: number | undefined },
    signal: AbortSignal,
    redirected: string | undefined,
    closedBefore: string,
  ): KubernetesApiError {
    // e.g. "; the server throttled it (429) 2 times and answered 503 once, 500 3 times with a Retry-After meanwhile"
    const waits = waited.length === 0 ? '' : `; the server ${waitedText(waited)} meanwhile`;
    // not sent: the time went on the credentials, which only an exec plugin takes long to give
    const user = sent || this.kc === undefined ? undefined : execPluginUser(this.kc);
    const from = this.shownHost(redirected);
    // an answer that began says what it began with: a create answered 201 made the object
    const what =
      user === undefined
        ? answered === undefined
          ? `no answer from ${from} within ${this.timeoutMs} ms (requestTimeoutMs${waits})`
          : `the answer from ${from} (HTTP ${answered}) began but did not end within ${this.timeoutMs} ms (requestTimeoutMs${waits})`
        : waitsForAnotherRequestsPlugin(signal)
          ? `the request waited ${this.timeoutMs} ms (requestTimeoutMs${waits}) ` +
            `behind the exec credential plugin of user ${quoteText(user)}, ` +
            'still running for another request (the plugins of a KubeConfig run one at a time, as kubectl runs them), and was not sent'
          : `the exec credential plugin of user ${quoteText(user)} ` +
            `did not answer within ${this.timeoutMs} ms (requestTimeoutMs${waits}): ` +
            `${this.stopsPlugins ? 'it was stopped, and ' : ''}the request was not sent`;
    // after a send whose connection closed before any answer, that first send is said too
    return unansweredError(target, `${closedBefore}${what}`, undefined, this.timeoutMs);
  }
}

/**
 * The rejections of ApiRequests.run that leave open whether the request took effect (answerLost),
 * each with the HTTP status its answer began with, when it began before it was lost (answerBegan).
 */
const LOST_ANSWERS = new WeakMap<object, number | undefined>();

/**
 * Whether `err`, a rejection of ApiRequests.run (or requestJson), leaves open whether the request
 * took effect: it went out and its answer was lost — its connection dropped or reset, its
 * deadline passed — or an earlier send of it was answered with a 5xx the deadline then ended the
 * wait after. A create may then have stored its object. False for every answer the server gave,
 * and for a request that failed before it went out.
 * @internal
 */
export function answerLost(err: unknown): boolean {
  return typeof err === 'object' && err !== null && LOST_ANSWERS.has(err);
}

/**
 * The HTTP status a lost answer (answerLost) began with — its status line came, then its body
 * was cut or stalled past the deadline —, else undefined: a create answered 201 made its object.
 * @internal
 */
export function answerBegan(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null ? LOST_ANSWERS.get(err) : undefined;
}

/**
 * Whether the write that failed with `err` (a rejection of ApiRequests.run, or requestJson) may
 * have taken effect all the same, so that its caller reads the object back: its answer was lost
 * (answerLost), or the API server's side answered it with a 5xx that does not say it was left
 * undone — 500 (kube-apiserver's InternalError, a storage error after etcd committed, a panic),
 * 502 and 503 (a proxy or load balancer that lost the server behind it, or gave up waiting, after
 * it had passed the request on; kube-apiserver's own 503s), 504 (its request timeout, which
 * answers while the handler goes on and may still commit). 501 Not Implemented and 505 HTTP Version
 * Not Supported (and any other 5xx: 507, 511, …) say the request was not understood or not
 * served: nothing was done. A 5xx that came from the host a redirect took the request to says
 * nothing of the API server, which answered the redirect: nothing was done there either.
 * @internal
 */
export function mayHaveTakenEffect(err: unknown): boolean {
  if (answerLost(err)) return true;
  const code = err instanceof KubernetesApiError ? err.code : httpCode(err);
  return code !== undefined && MAY_HAVE_COMMITTED.has(code) && redirectedTo(err) === undefined;
}

/** The 5xx statuses a write may have taken effect under (mayHaveTakenEffect). */
const MAY_HAVE_COMMITTED = new Set([500, 502, 503, 504]);

/**
 * The verbs of ApiRequests whose request reads and changes nothing (a GET): sent once more when
 * their connection closes before any of the answer came (closedUnanswered).
 */
const READS = new Set<RequestTarget['verb']>(['get', 'list']);

/**
 * The error codes of a connection closed or reset under a request: undici's `other side closed`
 * (UND_ERR_SOCKET), Node's ECONNRESET (node-fetch's `socket hang up` too) and EPIPE.
 */
const CLOSED = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/**
 * Whether the request that failed with `err`, written on its connection (whenWritten), met that
 * connection's close or reset before any of its answer came (the caller knows none came): the
 * fetch failed with no HTTP answer, not on the deadline or close(), after it went out (wentOut),
 * on a connection closed or reset (CLOSED). That is what a kept-alive connection looks like that
 * the server closes as idle (kube-apiserver's or a load balancer's idle timeout) just as the next
 * request is written on it: `other side closed`, `socket hang up`, ECONNRESET.
 *
 * client-go sends an idempotent request again then — net/http's Transport, on a reused
 * connection (persistConn.shouldRetryRequest); its rest client, a GET on any connection reset or
 * closed (rest/request.go, IsConnectionReset and IsProbableEOF) —, and so a get or a list page
 * (ApiRequests.run) and a watch request (watch-request.ts) are sent once more, at once; the
 * connection that closed is gone from the pool, so the resend goes on another one. Closed so
 * again, the request fails, its message saying it was sent twice (noteClosedTwice); failing
 * otherwise the second time, its message says how the first send ended too (noteClosedFirst). A create or
 * delete is not sent again so: it may have reached the server, and its caller reads the object
 * back (store.ts).
 * @internal
 */
export function closedUnanswered(err: unknown, signal: AbortSignal, server: string): boolean {
  if (signal.aborted || !isFetchFailure(err) || !wentOut(err, server)) return false;
  return causeChain(err).some((e) => typeof e.code === 'string' && CLOSED.has(e.code));
}

/**
 * The error codes of a connection that was never made, or never secured: nothing of the request
 * went out on it. (ETIMEDOUT is not one: it ends an established connection too.)
 */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Whether `err` is a failure of the fetch itself, without an HTTP answer: not one of ours (ErrDestroyed, a KubernetesApiError). */
function isFetchFailure(err: unknown): boolean {
  return !(err instanceof KubernetesApiError) && !(err instanceof IPAllocatorError) && httpCode(err) === undefined;
}

/**
 * Whether a request whose fetch failed with `err` (no HTTP answer) after the middleware handed it
 * on may have reached the server to `server`: not when the connection was never made or secured,
 * the runtime refused it (Deno without --allow-net), fetch refused its port or a header. Anything
 * else — a reset, a connection closed before the answer — may have come after the request went out.
 */
function wentOut(err: unknown, server: string): boolean {
  if (deniedByRuntime(err) !== undefined || blockedPort(err, server) !== undefined || hasInvalidHeader(err)) return false;
  return !causeChain(err).some((e) => typeof e.code === 'string' && (NOT_CONNECTED.has(e.code) || TLS_CODE.test(e.code)));
}

/**
 * The answers waited out, counted by kind: "throttled it (429) 2 times and answered 503 once, 500
 * 3 times with a Retry-After". Empty when none.
 */
function waitedText(waited: readonly number[]): string {
  const counts = new Map<number, number>();
  for (const code of waited) counts.set(code, (counts.get(code) ?? 0) + 1);
  const times = (n: number) => (n === 1 ? 'once' : `${n} times`);
  const said: string[] = [];
  const throttled = counts.get(429);
  if (throttled !== undefined) said.push(`throttled it (429) ${times(throttled)}`);
  const others = [...counts].filter(([code]) => code !== 429).map(([code, n]) => `${code} ${times(n)}`);
  if (others.length > 0) said.push(`answered ${others.join(', ')} with a Retry-After`);
  return said.join(' and ');
}

/**
 * The shortest wait before a request is sent again: 200 ms, for a Retry-After of 0 (or below).
 * client-go sends such a request again at once, held back only by its client-side rate limiter
 * (rest/with_retry.go Before → tryThrottleWithInfo; 5 requests a second by default, after a burst
 * of 10), which this client has none of: a server or proxy that answers `Retry-After: 0` to every
 * try would otherwise get the 11 sends of each request all at once. 200 ms is that limiter's pace.
 */
const MIN_WAIT_SECONDS = 0.2;
/** The longest: 60 s (a Retry-After of an hour is not waited out for an hour; the request's deadline ends it first anyway). */
const MAX_WAIT_SECONDS = 60;

/**
 * The seconds to wait before sending the request again, with the answer translated, or
 * undefined when `err` is no answer that asks for a wait. The one reading of a wait the server
 * asks for: ApiRequests for every request it makes, the informer for a refused watch
 * (informer.ts), whose answer comes from watch-request.ts in client-node's error shape. client-go's rule (rest/with_retry.go,
 * withRetry.IsNextRetry → checkWait → retryAfterSeconds): a 429 or any status ≥ 500 whose
 * Retry-After header holds a whole number of seconds, for every verb — the server (or a proxy in
 * front of it) said when to come back, so the request is sent again rather than failed; the
 * request's body is bytes here, which client-go resends too. kube-apiserver writes that header
 * whenever its Status names details.retryAfterSeconds (responsewriters.ErrorNegotiated); its own
 * throttling answers 429 with the header and a text body. For a 429 only, the Status's
 * retryAfterSeconds also counts when the header is missing (a server that writes only the
 * Status; a 429 is turned away unread, so waiting is safe); a 5xx needs the header, exactly as
 * client-go. A header of 0 or a negative number asks for no wait (client-go sends again at once):
 * 200 ms (MIN_WAIT_SECONDS); one that is no whole number — an HTTP date, a fraction — names no
 * wait at all, as client-go reads it. At most 60 s. Anything else — a 5xx or a 429 naming no
 * wait — is not sent again.
 * @internal
 */
export function askedWait(err: unknown, target: RequestTarget): { seconds: number; error: KubernetesApiError } | undefined {
  if (err instanceof KubernetesApiError) return undefined; // ours (a timeout) or already translated: not the server's answer
  const api = translate(err, target.verb, target.resource, target.name);
  if (!(api instanceof KubernetesApiError) || api.code === undefined || !(api.code === 429 || api.code >= 500)) return undefined;
  const headers = (err as { headers?: unknown }).headers;
  const header = typeof headers === 'object' && headers !== null ? (headers as Record<string, unknown>)['retry-after'] : undefined;
  const fromHeader = typeof header === 'string' ? retryAfterSeconds(header) : undefined;
  // a Status names a wait only with a positive retryAfterSeconds (apimachinery's
  // SuggestsClientDelay; kube-apiserver leaves a 0 out)
  const fromStatus = api.code === 429 ? api.status?.details?.retryAfterSeconds : undefined;
  const asked = fromHeader ?? (typeof fromStatus === 'number' && fromStatus > 0 ? fromStatus : undefined);
  if (typeof asked !== 'number' || !Number.isFinite(asked)) return undefined;
  return { seconds: Math.min(MAX_WAIT_SECONDS, Math.max(MIN_WAIT_SECONDS, asked)), error: api };
}

/**
 * A Retry-After header read as client-go reads it (rest/request.go retryAfterSeconds:
 * Header.Get, then strconv.Atoi): the first value when several came (fetch joins them with ", "),
 * an optional sign and decimal digits within int64; undefined for anything else (an HTTP date,
 * a fraction, an overflow), which is then no wait to honour.
 */
function retryAfterSeconds(header: string): number | undefined {
  const n = goInt64(header.split(',')[0]!.trim());
  return n === undefined ? undefined : Number(n);
}

/**
 * client-node per-call options whose middleware puts `signal` on the request (1.x and 2.x alike),
 * tells `onSent` (the request is authenticated and about to be sent), `onWritten` (it was written
 * on a connection made and secured: see whenWritten) and `onAnswered` (its answer
 * began: status and headers in, the body not yet read), lets the fetch end the
 * answer's body when its connection fails (`letFetchEndBody`), and hands the answer on with a
 * body read no further than MAX_ANSWER_BODY_BYTES (answer-body.ts), failing with what
 * `tooLarge(status)` returns past it. Under client-node 1.x the request is sent by
 * answer-body.ts's `streamingHttpLibrary`, whose answers give their stream.
 */
function withSignal(
  signal: AbortSignal,
  onSent: () => void,
  onWritten: () => void,
  onAnswered: (status: number) => void,
  tooLarge: (status: number) => Error,
  route: Route,
): ConfigurationOptions {
  const middleware: ObservableMiddleware = {
    pre(context) {
      onSent();
      context.setSignal(signal);
      followRoute(context, route);
      whenWritten(context, onWritten);
      keepingConnection(context);
      return new Observable(Promise.resolve(context));
    },
    post(context) {
      onAnswered(context.httpStatusCode);
      if (typeof context.body.stream !== 'function') return new Observable(Promise.resolve(context));
      const stream = context.body.stream() as Chunks | null | undefined;
      // undici's body (2.x); node-fetch's (1.x) ends on a lost connection by itself
      if (stream !== null && stream !== undefined && 'getReader' in stream) letFetchEndBody(stream);
      const body = cappedBody(stream ?? null, () => tooLarge(context.httpStatusCode));
      return new Observable(Promise.resolve(new ResponseContext(context.httpStatusCode, context.headers, body)));
    },
  };
  return {
    middleware: [middleware],
    middlewareMergeStrategy: 'append',
    ...(STREAMING_HTTP === undefined ? {} : { httpApi: STREAMING_HTTP }),
  };
}

/**
 * Where one attempt of a request was sent (the API server's origin, and the method) and where its
 * hops went: the last one's origin and method, and the first origin other than the API server's
 * any hop went to.
 * @internal
 */
export interface Route {
  asked: string | undefined;
  last: string | undefined;
  away: string | undefined;
  askedMethod: string | undefined;
  lastMethod: string | undefined;
  /**
   * The URL the last hop's redirect (a 3xx answer with a Location) named, resolved against that
   * hop's; undefined when it answered with anything else. fetch then sends the next hop there,
   * unless it refuses to (a port it never connects to), before saying where.
   */
  location: string | undefined;
}

/** A Route before the request is sent. @internal */
export function newRoute(): Route {
  return { asked: undefined, last: undefined, away: undefined, askedMethod: undefined, lastMethod: undefined, location: undefined };
}

/**
 * A redirect fetch followed that makes the answer another than the API server's to the request
 * sent. `origin`: the other origin it took the request to — where it ended, else the first it
 * passed through on its way back (fetch leaves the Authorization header out from the first hop
 * to another origin on, so the API server had the request without it). `method`: the method the
 * answered request was sent with when a redirect changed it (fetch sends a POST again as a GET
 * after a 301 or 302, any method but GET and HEAD after a 303). `asked`: the API server's origin.
 * @internal
 */
export interface Redirected {
  readonly origin: string | undefined;
  readonly method: string | undefined;
  /** The API server's origin the request was sent to, when known: over http:// it had no credentials to leave out. */
  readonly asked: string | undefined;
}

/** The origin a redirect took the request to when it is not the one asked (Redirected.origin), else undefined. */
function elsewhere(route: Route): string | undefined {
  return route.last !== undefined && route.last !== route.asked ? route.last : route.away;
}

/** The redirect that made the answer another than the API server's to the request sent, else undefined. @internal */
export function redirected(route: Route): Redirected | undefined {
  const origin = elsewhere(route);
  const method = route.lastMethod !== route.askedMethod ? route.lastMethod : undefined;
  return origin === undefined && method === undefined ? undefined : { origin, method, asked: route.asked };
}

/**
 * Has the request's dispatcher note in `route` the origin of each hop, and the Location of a
 * redirect it answered with: fetch follows a redirect itself, sending each hop through the
 * dispatcher, and client-node's answer does not say where it ended (IsomorphicFetchHttpLibrary
 * drops the response's url), nor fetch's refusal of a redirect where it led. client-node 2.x only:
 * 1.x sends through node-fetch, with no dispatcher, and `route` stays empty.
 * @internal
 */
export function followRoute(context: unknown, route: Route): void {
  const { getDispatcher, setDispatcher, getUrl } = context as {
    getDispatcher?: () => Dispatcher | undefined;
    setDispatcher?: (d: Dispatcher) => void;
    getUrl?: () => string;
  };
  if (typeof getDispatcher !== 'function' || typeof setDispatcher !== 'function' || typeof getUrl !== 'function') return;
  try {
    route.asked = new URL(getUrl.call(context)).origin;
  } catch {
    return;
  }
  const inner = getDispatcher.call(context);
  setDispatcher.call(context, {
    dispatch(options, handler) {
      try {
        route.last = new URL(String(options.origin)).origin;
      } catch {
        route.last = undefined;
      }
      if (route.last !== route.asked) route.away ??= route.last;
      const method = typeof options.method === 'string' ? options.method.toUpperCase() : undefined;
      // the first hop is the request as sent
      if (route.lastMethod === undefined) route.askedMethod = method;
      route.lastMethod = method;
      route.location = undefined;
      const { path } = options as { path?: unknown };
      const hop = `${String(options.origin)}${typeof path === 'string' ? path : ''}`;
      return sentThrough(inner).dispatch(options, notingLocation(handler, hop, route));
    },
  });
}

/** A redirect's status: fetch follows these, by their Location (Fetch standard, "redirect status"). */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** What an undici dispatch handler is called with as the answer begins: both forms undici calls. */
interface AnswerHandler {
  onHeaders?(status: number, rawHeaders: unknown, ...rest: unknown[]): unknown;
  onResponseStart?(controller: unknown, status: number, headers: unknown, ...rest: unknown[]): unknown;
  [name: string]: unknown;
}

/**
 * `handler`, noting in `route.location` the Location of a redirect the hop to `hop` (its URL) is
 * answered with, resolved against `hop`. The answer is handed on as it is.
 */
function notingLocation(handler: unknown, hop: string, route: Route): unknown {
  const note = (status: number, location: unknown): void => {
    if (!REDIRECT_STATUSES.has(status) || typeof location !== 'string') return;
    try {
      route.location = new URL(location, hop).href;
    } catch {
      // no URL: fetch fails on it, and says so
    }
  };
  const target = handler as AnswerHandler;
  const wrapped: Partial<AnswerHandler> = {
    onHeaders: (status, rawHeaders, ...rest) => {
      note(status, rawHeaderValue(rawHeaders, 'location'));
      return target.onHeaders?.(status, rawHeaders, ...rest);
    },
    onResponseStart: (controller, status, headers, ...rest) => {
      note(status, (headers as { location?: unknown } | null | undefined)?.location);
      return target.onResponseStart?.(controller, status, headers, ...rest);
    },
  };
  return new Proxy(target, {
    get(t, name) {
      if (typeof name === 'string' && Object.hasOwn(wrapped, name) && typeof t[name] === 'function') return wrapped[name];
      const value: unknown = Reflect.get(t, name);
      return typeof value === 'function' ? value.bind(t) : value;
    },
  });
}

/**
 * `agent`, the agent node-fetch sends a request to `url` with (client-node 1.x; undefined: Node's
 * global one for its scheme), telling `onWritten` once the request was written (writtenThrough);
 * `agent` itself where that cannot be watched. The one watch of an agent: whenWritten's for a
 * RequestContext of 1.x, and the watch's own node-fetch request (watch-request.ts).
 * @internal
 */
export function agentTellingWritten(agent: unknown, url: string, onWritten: () => void): unknown {
  return writtenThrough(agent ?? defaultAgent(url), onWritten) ?? agent;
}

/**
 * Has `onWritten` told once the request was written on a connection made and secured, so that a
 * connection refused, reset or stalled in its TCP or TLS handshake leaves it untold (nothing of
 * the request reached the server). A RequestContext of client-node 2.x carries an undici
 * Dispatcher: told when undici's handler hears onRequestSent. One of 1.x — installed, or the
 * API client of a 1.x KubeConfig given where 2.x is installed — carries the http.Agent its
 * KubeConfig set (applySecurityAuthentication runs before this middleware): told when Node's
 * request has been written on its socket (agentTellingWritten). Told at once where neither can be
 * watched.
 * @internal
 */
export function whenWritten(context: unknown, onWritten: () => void): void {
  const { getDispatcher, setDispatcher, getAgent, setAgent, getUrl } = context as {
    getDispatcher?: () => Dispatcher | undefined;
    setDispatcher?: (d: Dispatcher) => void;
    getAgent?: () => unknown;
    setAgent?: (agent: unknown) => void;
    getUrl?: () => string;
  };
  if (typeof getDispatcher === 'function' && typeof setDispatcher === 'function') {
    const inner = getDispatcher.call(context);
    setDispatcher.call(context, {
      dispatch(options, handler) {
        const watched = new Proxy(handler as { onRequestSent?: unknown }, {
          get(target, key, receiver) {
            if (key !== 'onRequestSent') return Reflect.get(target, key, receiver);
            return () => {
              onWritten();
              const own = target.onRequestSent;
              return typeof own === 'function' ? own.call(target) : undefined;
            };
          },
        });
        return sentThrough(inner).dispatch(options, watched);
      },
    });
    return;
  }
  if (typeof getAgent === 'function' && typeof setAgent === 'function' && typeof getUrl === 'function') {
    const agent = getAgent.call(context);
    const watched = agentTellingWritten(agent, getUrl.call(context), onWritten);
    if (watched !== agent) {
      setAgent.call(context, watched);
      return;
    }
  }
  onWritten();
}

/** The agent node-fetch (client-node 1.x) sends a request to `url` with when it is given none: Node's global one for its scheme. */
function defaultAgent(url: string): http.Agent {
  return url.startsWith('https:') ? https.globalAgent : http.globalAgent;
}

/**
 * `agent`, handing each request it is given on as it is, and telling `onWritten` once that
 * request was written: when Node's ClientRequest finishes — the last of the request handed to the
 * socket's write, which completes only once the connection is made and, over TLS, its handshake
 * is done (Node holds what is written to a TLS socket until then) — on a socket not destroyed
 * meanwhile (a destroyed one completes the writes still pending, unwritten). Undefined when
 * `agent` has no addRequest to watch (node-fetch also takes a function returning the agent).
 */
function writtenThrough(agent: unknown, onWritten: () => void): object | undefined {
  const target = agent as { addRequest?: (req: http.ClientRequest, options: unknown) => unknown } | null;
  const add = target?.addRequest;
  if (target === null || typeof add !== 'function') return undefined;
  const addRequest = (req: http.ClientRequest, options: unknown) => {
    req.once('finish', () => {
      if (req.socket !== null && !req.socket.destroyed) onWritten();
    });
    return add.call(target, req, options);
  };
  return new Proxy(target, {
    get: (t, key, receiver) => (key === 'addRequest' ? addRequest : Reflect.get(t, key, receiver)),
  });
}

/** The first value of the header `name` (lower case) in undici's raw headers (name, value, name, value, … as Buffers or text). */
function rawHeaderValue(rawHeaders: unknown, name: string): string | undefined {
  if (!Array.isArray(rawHeaders)) return undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (String(rawHeaders[i]).toLowerCase() === name) return String(rawHeaders[i + 1]);
  }
  return undefined;
}

/** How requests are sent so that their answers give their body's stream (answer-body.ts). */
const STREAMING_HTTP = streamingHttpLibrary();

/**
 * The error of a request whose answer's body went on past MAX_ANSWER_BODY_BYTES: e.g. `list
 * ipaddresses.networking.k8s.io: the answer (HTTP 200) went on past 128 MiB, more than any answer
 * of the API server holds, and was not read further (a server or proxy sending without end?)`.
 * No `code`: there is no answer to read; `cutOffStatus` says which it was.
 */
function bodyTooLarge(target: RequestTarget, status: number): KubernetesApiError {
  return new KubernetesApiError(
    target.verb,
    target.resource,
    target.name,
    undefined,
    undefined,
    `the answer (HTTP ${status}) went on past ${MAX_ANSWER_BODY_BYTES / (1024 * 1024)} MiB, ` +
      'more than any answer of the API server holds, ' +
      'and was not read further (a server or proxy sending without end?)',
    undefined,
    undefined,
    undefined,
    status,
  );
}

/**
 * How a request kept from going out is said — by its kubeconfig (the TLS material, a proxy, the
 * credentials) or a port fetch never connects to —, by the library and by the command line:
 * "the request to HOST was not sent: WHY".
 * @internal
 */
export function requestNotSent(host: string, why: string): string {
  return `the request to ${host} was not sent: ${why}`;
}

/**
 * The error of a request that has no answer to describe — not sent, not answered in time, or
 * answered with a body not read —: `code` and Status undefined, `detail` saying what happened.
 */
function unansweredError(target: RequestTarget, detail: string, cause?: unknown, timeoutMs?: number): KubernetesApiError {
  return new KubernetesApiError(target.verb, target.resource, target.name, undefined, undefined, detail, cause, timeoutMs);
}

/** The property node:stream's isReadable() reads first, as Node's own web streams define it. */
const NODE_STREAM_READABLE = Symbol.for('nodejs.stream.readable');

/**
 * Makes a connection that fails part-way through an answer end the body being read, under Deno.
 *
 * undici's fetch (client-node 2.x) ends a body whose connection was reset or closed early only
 * `if (isReadable(stream))`, node:stream's isReadable. Node's web ReadableStream answers it (it
 * defines this symbol); Deno's does not, so there isReadable() says null ("cannot tell"), undici
 * leaves the body open, and reading it waits for ever — for us, until the request's deadline,
 * reported as "no answer within N ms" instead of the reset. Where isReadable() cannot tell, the
 * body is given the answer undici assumes: readable. That is safe even once it no longer is:
 * undici asks only to decide whether to error the stream, and erroring a stream that has closed
 * or errored already does nothing (the Streams standard's ReadableStreamDefaultControllerError and
 * ReadableByteStreamControllerError return when the state is not "readable"). An aborted fetch
 * (the deadline, close()) then errors the body too, as under Node. Under Node the body is left
 * as it is. A watch's body, read for as long as it stays open, gets the same (watch-request.ts):
 * a watch cut mid-stream then ends at once instead of when its idle timers run out.
 * @internal
 */
export function letFetchEndBody(body: ReadableStream<Uint8Array> | null): void {
  if (body === null || isReadable(body as unknown as NodeJS.ReadableStream) !== null) return;
  Object.defineProperty(body, NODE_STREAM_READABLE, { value: true });
}
