// What an answer was, as the server sent it: its content type, and the JSON of a 2xx answer,
// parsed here instead of by client-node's typed decoding. That decoding fits the body to its
// model and cannot fail on a field of the wrong type, so it hides one: a string where the model
// has an array is taken one character at a time (a ServiceCIDR's spec.cidrs "10.96.0.0/24"
// becomes ["1", "0", …]), a string where it has an object becomes an empty object (an
// IPAddress's spec.parentRef), `[]`, `42` and `"hello"` become an empty typed object, and an
// object where the model has an array throws "data is not iterable". Every answer we read is read
// from this JSON — list pages, the store's and the ServiceCIDR helpers' create/get/delete
// (`requestJson`), the command line's requests —; answers.ts then checks what it is.
//
// client-node is handed `null` in place of a body the probe parsed (its decoding returns null for
// it), so it decodes nothing; a body that is not JSON, or not a 2xx answer, reaches it unchanged.
import { type ConfigurationOptions, Observable, type ObservableMiddleware, ResponseContext } from '@kubernetes/client-node';
import { isJson } from './answers.ts';
import { isPlainHttp } from './plain-http.ts';
import type { KubernetesApiError } from './errors.ts';
import type { ApiRequests, Redirected, RequestTarget } from './requests.ts';

/** @internal */
export interface AnswerProbe {
  /**
   * The middleware to add to each attempt's per-call options (middlewareMergeStrategy 'append'),
   * first in the list: client-node runs `post` in reverse order, and the probe must read the body
   * after requests.ts's middleware has let the fetch end it on a lost connection (under Deno the
   * read would otherwise wait out the deadline).
   */
  readonly middleware: ObservableMiddleware;
  /** The last answer's media type, without parameters; undefined before an answer or without the header. */
  readonly contentType: string | undefined;
  /** The last answer's JSON (any JSON value, a string too), when it was a 2xx JSON answer; else undefined. */
  readonly json: { value: unknown } | undefined;
  /**
   * True when the last answer was a 2xx said to be JSON (its content type) whose body does not
   * parse: cut short by a proxy or a broken server. client-node is handed `null` for it, as for
   * JSON the probe parsed, so that it says nothing of its own (JSON.parse's SyntaxError).
   */
  readonly notJson: boolean;
  /** True once an answer arrived (its `post` ran): the request was answered. */
  readonly answered: boolean;
  /** Forgets the last answer: call before each attempt. */
  reset(): void;
}

const NULL_BODY = {
  text: () => Promise.resolve('null'),
  binary: () => Promise.resolve(new TextEncoder().encode('null')),
  stream: () => null,
};

/** A probe for one request (its attempts one after another). @internal */
export function answerProbe(): AnswerProbe {
  const probe = {
    contentType: undefined as string | undefined,
    json: undefined as { value: unknown } | undefined,
    notJson: false,
    answered: false,
    reset() {
      probe.contentType = undefined;
      probe.json = undefined;
      probe.notJson = false;
      probe.answered = false;
    },
    middleware: {
      pre: (context) => new Observable(Promise.resolve(context)),
      post: (context) => new Observable(read(context)),
    } as ObservableMiddleware,
  };
  async function read(context: ResponseContext): Promise<ResponseContext> {
    probe.answered = true;
    const type = context.headers['content-type'];
    probe.contentType = typeof type === 'string' ? type.split(';')[0]!.trim() : undefined;
    const ok = context.httpStatusCode >= 200 && context.httpStatusCode <= 299;
    if (!ok || probe.contentType === undefined || !isJson(probe.contentType)) return context;
    const text = await context.body.text();
    try {
      probe.json = { value: JSON.parse(text) as unknown };
    } catch {
      // not JSON after all: said by the caller as the server's malformed answer. client-node would
      // fail on it with JSON.parse's SyntaxError, which reads as a credential plugin's output.
      probe.notJson = true;
    }
    return new ResponseContext(context.httpStatusCode, context.headers, NULL_BODY as unknown as ResponseContext['body']);
  }
  return probe;
}

/**
 * Why a 2xx answer after a redirect is not read, however much it looks like the answer asked for,
 * as the end of a sentence "… answered <verb> … with": kube-apiserver answers its API requests
 * itself and redirects none. Followed to another host, the request reached it (and any host after
 * it, the API server's too) without an Authorization header: fetch leaves it out for another
 * origin (said so whether or not the user had a token to send; from an http:// API server, which
 * is sent no credentials, said as such) and, where the redirect changed its method (a create after a 301, 302 or 303, a delete
 * after a 303), as a GET — the message says so only then; sent again as a GET on the API server's own
 * origin, the 2xx is the answer to that GET (the object read), not to the create or delete asked.
 * `status`: the answer's HTTP status, said when it is no 2xx (a watch refuses every answer after a
 * redirect: watch-request.ts).
 * @internal
 */
export function notTheApiServersAnswer(redirect: Redirected, verb: string, status?: number): string {
  // a watch's answer of another status (watch-request.ts) is refused the same way
  const answer = status === undefined || (status >= 200 && status < 300) ? '2xx answer' : `answer (HTTP ${status})`;
  if (redirect.origin !== undefined) {
    // an http:// API server was sent no credentials (plain-http.ts): none were left out on the way
    const without = isPlainHttp(redirect.asked)
      ? 'without credentials, as the API server had it (none are sent to an http:// server)'
      : 'without an Authorization header (fetch leaves out the one a user may have for another origin)';
    return (
      `a redirect to ${redirect.origin}, whose ${answer} is not taken as the API server's: the API server redirects no API request, ` +
      `and the request reached that host ${without}${redirect.method === undefined ? '' : `, as a ${redirect.method}`}`
    );
  }
  return (
    `a redirect that sent the request again as a ${redirect.method}, whose ${answer} is not the answer to the ${verb}: ` +
    'the API server redirects no API request (a front proxy did; after a 301 or 302 a create, after a 303 a delete too, goes again as a GET)'
  );
}

/**
 * Runs one request through `requests` (its deadline, and the waits the server asks for; `onWait`
 * and `options` as ApiRequests.run) with a probe on each attempt, and resolves to its 2xx answer
 * as the server sent it: the JSON value, whatever it is (`{}`, `[]`, `"hello"`, an object with a
 * field of the wrong type), for the caller to check (answers.ts) before reading anything from
 * it. A 2xx answer that is not JSON (an auth proxy's login page answered 200 text/html) rejects
 * with `malformed("a malformed body (content type text/html): not JSON")`; a 2xx answer from
 * another host than the API server's, where a redirect took the request, rejects with
 * `malformed(…)` naming that host, whatever it holds, and so does one a redirect on the API
 * server's origin sent again with another method (notTheApiServersAnswer); an error answer
 * rejects as `call` does (the caller translates).
 * @internal
 */
export async function requestJson(
  requests: ApiRequests,
  target: RequestTarget,
  call: (options: ConfigurationOptions, serverErrorsWaitedOut: string | undefined) => Promise<unknown>,
  malformed: (what: string) => Error,
  onWait?: (error: KubernetesApiError, seconds: number) => void,
  options?: { resendAfterServerError?: boolean },
): Promise<unknown> {
  const probe = answerProbe();
  let redirected: Redirected | undefined;
  const decoded = await requests.run(
    target,
    (opts, serverErrorsWaitedOut) => {
      probe.reset();
      // client-node runs `post` in reverse order: the probe, first here, reads the body last,
      // after requests.ts's middleware has let the fetch end it on a lost connection (Deno)
      const middleware = [probe.middleware, ...(opts.middleware ?? [])];
      return call({ ...opts, middleware, middlewareMergeStrategy: 'append' }, serverErrorsWaitedOut);
    },
    onWait,
    { ...options, onRedirect: (redirect) => (redirected = redirect) },
  );
  const contentType = probe.contentType;
  // client-node decodes text (text/*) into an empty typed object: only the content type tells it
  // from `{}`. A redirect to another host (a login page) is said, naming it.
  const from = redirected?.origin === undefined ? '' : ` from ${redirected.origin}, where the API server redirected the request`;
  if (contentType !== undefined && (!isJson(contentType) || probe.notJson)) {
    throw malformed(`a malformed body (content type ${contentType})${from}: not JSON`);
  }
  if (redirected !== undefined) throw malformed(notTheApiServersAnswer(redirected, target.verb));
  if (probe.json !== undefined) return probe.json.value;
  // A body with no content type fails client-node's decoding ("No Content-Type defined"): what is
  // left is client-node's.
  return decoded;
}
