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
import type { KubernetesApiError } from './errors.ts';
import type { ApiRequests, RequestTarget } from './requests.ts';

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

/** A probe for one request (its attempts one after another). */
export function answerProbe(): AnswerProbe {
  const probe = {
    contentType: undefined as string | undefined,
    json: undefined as { value: unknown } | undefined,
    answered: false,
    reset() {
      probe.contentType = undefined;
      probe.json = undefined;
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
      // not JSON after all: client-node reads it as before (and fails on it)
      const again = {
        text: () => Promise.resolve(text),
        binary: () => Promise.resolve(new TextEncoder().encode(text)),
        stream: () => null,
      };
      return new ResponseContext(context.httpStatusCode, context.headers, again as unknown as ResponseContext['body']);
    }
    return new ResponseContext(context.httpStatusCode, context.headers, NULL_BODY as unknown as ResponseContext['body']);
  }
  return probe;
}

/**
 * Why a 2xx answer from another host than the API server's is not read, however much it looks
 * like the answer asked for, as the end of a sentence naming the redirect: kube-apiserver
 * answers its API requests itself and redirects none, and fetch, following the redirect, sent
 * that host no Authorization header (another origin) and, after a 301, 302 or 303, a GET in
 * place of a create or delete.
 */
export const NOT_THE_API_SERVERS =
  "whose 2xx answer is not taken as the API server's: the API server redirects no API request, and the request reached that host without its Authorization header (after a 301, 302 or 303, as a GET)";

/**
 * Runs one request through `requests` (its deadline, and the waits the server asks for; `onWait`
 * and `options` as ApiRequests.run) with a probe on each attempt, and resolves to its 2xx answer
 * as the server sent it: the JSON value, whatever it is (`{}`, `[]`, `"hello"`, an object with a
 * field of the wrong type), for the caller to check (answers.ts) before reading anything from
 * it. A 2xx answer that is not JSON (an auth proxy's login page answered 200 text/html) rejects
 * with `malformed("a malformed body (content type text/html): not JSON")`; a 2xx answer from
 * another host than the API server's, where a redirect took the request, rejects with
 * `malformed(…)` naming that host, whatever it holds (NOT_THE_API_SERVERS); an error answer
 * rejects as `call` does (the caller translates).
 */
export async function requestJson(
  requests: ApiRequests,
  target: RequestTarget,
  call: (options: ConfigurationOptions, afterServerError: boolean) => Promise<unknown>,
  malformed: (what: string) => Error,
  onWait?: (error: KubernetesApiError, seconds: number) => void,
  options?: { resendAfterServerError?: boolean },
): Promise<unknown> {
  const probe = answerProbe();
  let redirected: string | undefined;
  const decoded = await requests.run(
    target,
    (opts, afterServerError) => {
      probe.reset();
      // client-node runs `post` in reverse order: the probe, first here, reads the body last,
      // after requests.ts's middleware has let the fetch end it on a lost connection (Deno)
      const middleware = [probe.middleware, ...(opts.middleware ?? [])];
      return call({ ...opts, middleware, middlewareMergeStrategy: 'append' }, afterServerError);
    },
    onWait,
    { ...options, onRedirect: (origin) => (redirected = origin) },
  );
  const contentType = probe.contentType;
  // client-node decodes text (text/*) into an empty typed object: only the content type tells it
  // from `{}`. A redirect to another host (a login page) is said, naming it.
  const from = redirected === undefined ? '' : ` from ${redirected}, where the API server redirected the request`;
  if (contentType !== undefined && !isJson(contentType)) throw malformed(`a malformed body (content type ${contentType})${from}: not JSON`);
  if (redirected !== undefined) throw malformed(`a redirect to ${redirected}, ${NOT_THE_API_SERVERS}`);
  if (probe.json !== undefined) return probe.json.value;
  // A 2xx JSON body the probe could not parse fails client-node's decoding as well; a body with
  // no content type fails it too ("No Content-Type defined"): what is left is client-node's.
  return decoded;
}
