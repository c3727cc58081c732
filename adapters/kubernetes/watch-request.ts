// One watch request, sent as client-node's Watch sends it, with its body read line by line into
// events by us.
//
// Why not client-node's Watch itself: it drops a line that is not JSON without a word, and so
// any exception thrown from its event callback; the object that line carried then stays missing
// from the cache until some later re-list, while the informer says `synced` with no lastError.
// And it reads lines with node:readline, which holds a line of any length in memory (a 200 MB
// line cost ≈ 270 MB). Here each of those ends the watch as a failure (onDone(err)), which the
// informer reports in lastError and follows with a re-list:
//
//   answer 200 ─► chunks ─► lines (≤ MAX_WATCH_LINE_BYTES each) ─► JSON ─► {type, object} ─► onEvent
//                              │                                   │          │                │
//                              └ longer: failure                   └ not JSON └ another shape  └ throws: failure
//                                (not buffered past the cap)         failure    failure
//
// The request on the wire is client-node's: the same URL (`?watch=true` and the query in the
// order given), the same headers and TLS/proxy settings taken from the KubeConfig, through the
// same fetch client-node uses — 2.x: RequestContext + applySecurityAuthentication, sent by its
// IsomorphicFetchHttpLibrary (undici, with the KubeConfig's dispatcher); 1.x: applyToFetchOptions
// and the node-fetch client-node itself depends on. And the same timer as client-node 2.x's:
// started with the request, restarted by the answer and by every chunk, ending the watch with a
// TimeoutError when it runs out (watch-session.ts reads that end). An answer that a redirect led
// to another host, or sent again with another method, is refused, whatever its status, as
// answer-probe.ts refuses a 2xx of the kind (client-node 2.x: 1.x's node-fetch shows no hops).
// A request whose connection closed before any answer is sent once more (requests.ts
// closedUnanswered says when, and why).
import { STATUS_CODES } from 'node:http';
import { HttpMethod, IsomorphicFetchHttpLibrary, type KubeConfig, RequestContext } from '@kubernetes/client-node';
import { forgetRefusedCredential, withRequestSignal } from './exec-plugins.ts';
import { namingKubeconfig } from './user-checks.ts';
import { formatCount, quoteInput, quoteText } from '../quote.ts';
import { kubeconfigInUse } from './config.ts';
import { KubernetesApiError, malformedAnswer, noteClosedFirst, noteClosedTwice, noteKubeconfig, noteRedirect } from './errors.ts';
import { agentTellingWritten, closedUnanswered, followRoute, letFetchEndBody, newRoute, redirected, whenWritten } from './requests.ts';
import { notTheApiServersAnswer } from './answer-probe.ts';
import { bodyReader, type Chunks, concat, connectionFreed, nodeFetch } from './answer-body.ts';

/**
 * The longest watch line (one event, without its newline) read: 16 MiB. An event carries one
 * object; kube-apiserver refuses to store an object over etcd's request limit (1.5 MiB by
 * default, `--max-request-bytes`), and its JSON form is larger than the stored protobuf (field
 * names, base64 of binary fields, escapes), so the cap leaves about ten times that. IPAddress
 * and ServiceCIDR events are well under a kilobyte. A longer line is no event of a working
 * server: the watch fails as soon as the line passes the cap, before more of it is held.
 * @internal
 */
export const MAX_WATCH_LINE_BYTES = 16 * 1024 * 1024;

/** How much of an error answer's body is read, for the Status it carries: kube-apiserver's are well under 1 KiB. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** How much of a line too long is shown: its first 64 characters (at most 4 bytes each). */
const SHOWN_CHARACTERS = 64;

/** @internal */
export interface WatchTarget {
  /** e.g. ipaddresses.networking.k8s.io, for errors */
  resource: string;
  /** The collection's URL path, e.g. /apis/networking.k8s.io/v1/ipaddresses */
  path: string;
  query: Record<string, string | number | boolean>;
  /** client-node 2.x's timer (see the file comment), in ms. */
  timerMs: number;
  /** Aborts the watch at any time, before the answer too (a caller that gave up on it); left alone once the watch ended. */
  signal?: AbortSignal | undefined;
}

/**
 * Sends the watch request; resolves, once the server answered 200, to a function that aborts
 * the watch (onDone then hears the abort). `onEvent` gets each event; `onDone` is called exactly once: null for a clean end
 * of the stream; a line the reader refuses or an `onEvent` that throws, a KubernetesApiError
 * saying so; a lost connection, the fetch's error; the timer, a DOMException named
 * TimeoutError; the caller's abort, an AbortError. An answer other than 200 (or a failure before
 * any) is given to `onDone` as client-node gives it (an Error named after the status, with
 * `statusCode`), with the first 64 KiB of its body, its content type and its Retry-After, and the
 * returned abort then does nothing.
 * @internal
 */
export async function openWatch(
  kc: KubeConfig,
  target: WatchTarget,
  onEvent: (type: string, object: unknown) => void,
  onDone: (err: unknown) => void,
): Promise<() => void> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('No currently active cluster'); // client-node's words
  const url = new URL(cluster.server + target.path);
  url.searchParams.set('watch', 'true');
  for (const [key, value] of Object.entries(target.query)) url.searchParams.set(key, String(value));

  const controller = new AbortController();
  let cancelBody = () => {};
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  let aborted = false; // by the caller: nothing read after it is handed on, and onDone hears the abort
  let done = false;
  const restartTimer = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort(timeoutError());
      cancelBody();
    }, target.timerMs);
  };
  const finish = (err: unknown) => {
    if (done) return;
    done = true;
    if (timer !== undefined) clearTimeout(timer);
    // the caller's signal may outlive the watch (one for many watches): nothing of it is kept
    target.signal?.removeEventListener('abort', abort);
    controller.abort();
    onDone(timedOut ? timeoutError() : aborted ? abortError() : err);
  };
  // As client-node's controller.abort(): the read ends, and onDone hears it after this returns,
  // never from inside it (the caller may be settling the watch itself). The body is cancelled
  // too, so that the read ends whatever the fetch underneath does with its abort.
  const abort = () => {
    if (done) return;
    aborted = true;
    controller.abort();
    cancelBody();
  };
  // A caller that gives up before the answer (client-node's Watch hands out its abort only with
  // the answer) ends the request now: the connection is let go, and onDone hears it.
  const signal = target.signal;
  if (signal !== undefined) {
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
  }

  let body: ReturnType<typeof bodyReader>;
  let answerBody: Chunks;
  try {
    restartTimer();
    const first = { written: false };
    let answer: Answer;
    let firstClose: unknown; // the failure of a first send whose connection closed before any answer
    try {
      answer = await send(kc, url, controller.signal, first);
    } catch (err) {
      // its connection closed before any answer: sent once more (requests.ts closedUnanswered),
      // and a failure of that send says how the first one ended too
      if (!first.written || !closedUnanswered(err, controller.signal, cluster.server)) throw err;
      firstClose = err;
      const again = { written: false };
      answer = await send(kc, url, controller.signal, again).catch((e: unknown) => {
        if (again.written && closedUnanswered(e, controller.signal, cluster.server)) noteClosedTwice(e);
        else noteClosedFirst(e, err);
        throw e;
      });
    }
    if (answer.redirect !== undefined) {
      // events from another host (or from the API server reached without the token) are not the
      // cluster's changes, nor is its refusal the API server's (a 410 Gone that would skip the
      // backoff, a 401 for the token it was never sent, a 429 whose wait would be honoured): the
      // informer lists again, after its backoff, where the same redirect is refused too
      answer.discard();
      const what = notTheApiServersAnswer(answer.redirect, 'watch', answer.status);
      const refused = malformedAnswer('watch', target.resource, undefined, what);
      if (answer.redirect.origin !== undefined) noteRedirect(refused, answer.redirect.origin);
      throw refused;
    }
    // credentials refused: an exec plugin's are asked for again by the next request (exec-plugins.ts)
    if (answer.status === 401) forgetRefusedCredential(controller.signal);
    if (answer.status !== 200) {
      // As client-node gives it (an Error named after the status, with statusCode), plus what
      // its Watch drops: the first bytes of the body, a Status saying why (which user may not
      // watch what), and its content type, for translate() to describe.
      const error = new Error(STATUS_CODES[answer.status] ?? 'Internal Server Error') as Error & {
        statusCode: number;
        body?: string;
        headers?: Record<string, string>;
      };
      error.statusCode = answer.status;
      if (answer.body !== null) {
        const errorBody = bodyReader(answer.body);
        cancelBody = errorBody.cancel; // the timer and abort() end this read too
        error.body = await firstBytes(errorBody, MAX_ERROR_BODY_BYTES);
      } else {
        answer.discard();
      }
      // The headers read from it, and only those: the content type, for translate() to describe
      // the body; Retry-After, the wait the server asks for before the watch is sent again
      // (informer.ts, as client-go's rest client waits it out).
      const headers: Record<string, string> = {};
      if (answer.contentType !== undefined) headers['content-type'] = answer.contentType;
      if (answer.retryAfter !== undefined) headers['retry-after'] = answer.retryAfter;
      if (Object.keys(headers).length > 0) error.headers = headers;
      if (firstClose !== undefined) noteClosedFirst(error, firstClose);
      throw error;
    }
    if (answer.body === null) throw new Error('the watch answer has no body');
    answerBody = answer.body;
    body = bodyReader(answer.body);
    cancelBody = body.cancel;
    restartTimer();
  } catch (err) {
    // the kubeconfig the store loaded itself is named where it kept the watch from going out
    const inUse = kubeconfigInUse(kc);
    noteKubeconfig(err, inUse);
    finish(namingKubeconfig(err, inUse));
    return abort;
  }
  const handOn = (type: string, object: unknown): void => {
    if (!aborted) onEvent(type, object); // lines already read when the caller aborted are dropped
  };
  void readLines(body.chunks, target.resource, restartTimer, handOn).then(
    async () => {
      // a clean end (the server's timeoutSeconds): onDone hears it once the connection is free,
      // so that the watch resumed from it goes out on it, as client-go's does
      await connectionFreed(answerBody);
      finish(null);
    },
    (err: unknown) => {
      finish(err);
      cancelBody(); // a line refused: the rest of the body is not wanted
    },
  );
  return abort;
}

interface Answer {
  status: number;
  contentType: string | undefined;
  /** The Retry-After header, as sent (the values of several joined with ", ", as fetch gives them). */
  retryAfter: string | undefined;
  body: Chunks | null;
  /** The redirect fetch followed to that answer, when it makes it another than the API server's (requests.ts Redirected). */
  redirect?: ReturnType<typeof redirected>;
  /** Lets go of a body that will not be read. */
  discard(): void;
}

/**
 * Sends the GET as client-node's Watch does (see the file comment); `sent.written` is set once it
 * was written on a connection made and secured (requests.ts whenWritten).
 */
async function send(kc: KubeConfig, url: URL, signal: AbortSignal, sent: { written: boolean }): Promise<Answer> {
  const legacy = kc as unknown as { applyToFetchOptions?: (opts: object) => Promise<{ agent?: unknown } & Record<string, unknown>> };
  const onWritten = () => (sent.written = true);
  if (typeof legacy.applyToFetchOptions === 'function') {
    // client-node 1.x: its ResponseContext gives no stream, so its own fetch (node-fetch) is called
    const init = await withRequestSignal(signal, () => legacy.applyToFetchOptions!({}));
    const agent = agentTellingWritten(init.agent, url.href, onWritten);
    const response = (await nodeFetch()(url, { ...init, agent, method: 'GET', signal })) as {
      status: number;
      headers: { get(name: string): string | null };
      body: AsyncIterable<Uint8Array> & { destroy?: () => void };
    };
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? undefined,
      retryAfter: response.headers.get('retry-after') ?? undefined,
      body: response.body,
      discard: () => response.body.destroy?.(),
    };
  }
  const context = new RequestContext(url.toString(), HttpMethod.GET);
  // an exec credential plugin started here stops when the watch is given up (exec-plugins.ts)
  await withRequestSignal(signal, () => kc.applySecurityAuthentication(context));
  context.setSignal(signal);
  // fetch follows a redirect itself, and the answer does not say where it ended
  const route = newRoute();
  followRoute(context, route);
  whenWritten(context, onWritten);
  const response = await new IsomorphicFetchHttpLibrary().send(context).toPromise();
  const body = response.body.stream();
  // Under Deno a connection reset or closed mid-watch would otherwise leave the body open, and
  // the watch silent until its idle timers ran out (requests.ts says why).
  letFetchEndBody(body);
  return {
    status: response.httpStatusCode,
    contentType: response.headers['content-type'],
    retryAfter: response.headers['retry-after'],
    body,
    redirect: redirected(route),
    discard: () => void body?.cancel().catch(() => {}),
  };
}

/** The first `max` bytes of a body as text; the rest is let go of. A body that fails to read gives what came. */
async function firstBytes(body: ReturnType<typeof bodyReader>, max: number): Promise<string> {
  const pieces: Uint8Array[] = [];
  let held = 0;
  try {
    for await (const chunk of body.chunks) {
      pieces.push(chunk);
      held += chunk.length;
      if (held >= max) break;
    }
  } catch {
    // a connection cut mid-body: describe what came
  } finally {
    body.cancel();
  }
  return new TextDecoder().decode(concat(pieces, max));
}

/** The error a watch the caller aborted ends with (as client-node's, an AbortError). */
function abortError(): DOMException {
  return new DOMException('The operation was aborted.', 'AbortError');
}

/** The error client-node 2.x's Watch ends a watch with when its timer runs out. */
function timeoutError(): DOMException {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}

/**
 * Reads `body` to its end, handing each line's event to `onEvent`. Resolves when the body ends;
 * rejects with the body's error, or with a KubernetesApiError for a line it refuses or an
 * `onEvent` that threw. A last line without a newline counts as a line; empty lines are skipped.
 */
async function readLines(
  chunks: AsyncIterable<Uint8Array>,
  resource: string,
  onChunk: () => void,
  onEvent: (type: string, object: unknown) => void,
): Promise<null> {
  const decoder = new TextDecoder();
  // The line being read, as pieces: `held` bytes in all, never more than MAX_WATCH_LINE_BYTES.
  let pieces: Uint8Array[] = [];
  let held = 0;
  const take = (piece: Uint8Array): void => {
    if (held + piece.length > MAX_WATCH_LINE_BYTES) {
      throw failure(
        resource,
        `the API server sent a watch line longer than ${formatCount(MAX_WATCH_LINE_BYTES)} bytes (no newline within the first ${formatCount(held + piece.length)}), starting ` +
          `${quoteText([...decoder.decode(concat([...pieces, piece], SHOWN_CHARACTERS * 4))].slice(0, SHOWN_CHARACTERS).join(''))}…`,
      );
    }
    pieces.push(piece);
    held += piece.length;
  };
  const line = (): void => {
    const bytes = pieces.length === 1 ? pieces[0]! : concat(pieces, held);
    pieces = [];
    held = 0;
    const text = decoder.decode(bytes);
    if (text.trim() !== '') event(text, resource, onEvent);
  };
  for await (const chunk of chunks) {
    onChunk();
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      take(chunk.subarray(start, nl));
      line();
      start = nl + 1;
    }
    // The rest of the chunk begins the next line: the chunk itself when it holds no newline,
    // else a copy of its tail, so that the part already handed on is not held with it.
    if (start < chunk.length) take(start === 0 ? chunk : chunk.slice(start));
  }
  if (held > 0) line();
  return null;
}

/** One line: parsed, checked to be an event, and handed on. */
function event(text: string, resource: string, onEvent: (type: string, object: unknown) => void): void {
  const line = text.endsWith('\r') ? text.slice(0, -1) : text;
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    throw failure(resource, `the API server sent a watch line that is not JSON: ${quoteInput(line)}`);
  }
  const e = data as { type?: unknown; object?: unknown };
  if (typeof data !== 'object' || data === null || Array.isArray(data) || typeof e.type !== 'string' || !('object' in e)) {
    throw failure(
      resource,
      `the API server sent a watch line that is not an event (an object with a string "type" and an "object"): ${quoteInput(line)}`,
    );
  }
  try {
    onEvent(e.type, e.object);
  } catch (err) {
    const what = err instanceof Error ? err.message : String(err);
    throw failure(resource, `applying a watch event of type ${quoteInput(e.type)} failed: ${what}`, err);
  }
}

function failure(resource: string, detail: string, cause?: unknown): KubernetesApiError {
  return new KubernetesApiError('watch', resource, undefined, undefined, undefined, detail, cause);
}
