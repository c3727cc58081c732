// An answer's body, read by us with a cap: the one place the body of an API request's answer is
// read (lists, gets, creates, deletes, Status bodies of error answers), and where a watch's body
// is taken chunk by chunk (watch-request.ts).
//
// client-node reads a body whole, with no limit: `resp.text()`, undici's (2.x) or node-fetch's
// (1.x). A server, or something in between, that sends a body without end held the request until
// its deadline while memory grew without bound (gigabytes within 30 s on a fast link), and a body
// of some hundreds of megabytes ended in V8's "Cannot create a string longer than 0x1fffffe8
// characters". Here every answer of ApiRequests is read from its stream (requests.ts hands it to
// `cappedBody`), and reading stops as soon as it passes MAX_ANSWER_BODY_BYTES: the request fails
// with an error that names it and the cap, and the connection is dropped.
//
//   client-node 2.x   the answer's ResponseContext gives the stream (undici's web ReadableStream)
//   client-node 1.x   its ResponseContext gives only text() and buffer(): the request is sent by
//                     `streamingHttpLibrary` instead, as 1.x sends it (node-fetch, the
//                     KubeConfig's agent), whose body is node-fetch's Node Readable
//
// Either way the bytes counted are those of the body as decoded from its content encoding (gzip):
// what would be held.
import { type HttpLibrary, Observable, RequestContext, ResponseContext } from '@kubernetes/client-node';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { requireFromClientNode } from './client-node-check.ts';

/**
 * The largest answer body read: 128 MiB. No answer of kube-apiserver comes near it: a list page
 * of 500 items (client-go's pager default, ours) is under 1 MB for IPAddresses, ServiceCIDRs and
 * Services alike; an object is at most etcd's request limit (1.5 MiB by default); and the one list
 * asked for without paging (after an expired continue token, or `pageSize: 0`) holds 128 MiB of
 * some 170,000 IPAddresses (about 750 bytes each in JSON) or 30,000 Services with large
 * annotations, well past the 10,000 Services per cluster Kubernetes' scalability thresholds name.
 * It stays far below V8's longest string (about 512 Mi characters), which the text of a body
 * must fit in.
 * @internal
 */
export const MAX_ANSWER_BODY_BYTES = 128 * 1024 * 1024;

/** A body's chunks: a web ReadableStream (undici) or a Node Readable (node-fetch). @internal */
export type Chunks = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** A body's chunks, whichever kind of stream it is, and the means to let go of it. @internal */
export function bodyReader(body: Chunks): { chunks: AsyncIterable<Uint8Array>; cancel(): void } {
  if (!('getReader' in body)) {
    const readable = body as AsyncIterable<Uint8Array> & { destroy?: () => void };
    return { chunks: readable, cancel: () => readable.destroy?.() };
  }
  const reader = body.getReader();
  return {
    chunks: (async function* () {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    })(),
    // a pending read then ends; a stream already ended or errored has nothing to let go of
    cancel: () => void reader.cancel().catch(() => {}),
  };
}

/** The first `size` bytes of `pieces`, as one array. @internal */
export function concat(pieces: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(
    Math.min(
      size,
      pieces.reduce((n, p) => n + p.length, 0),
    ),
  );
  let at = 0;
  for (const p of pieces) {
    if (at === out.length) break;
    const part = p.subarray(0, out.length - at);
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * Resolves once the connection of an answer whose body was read to its end is free for the next
 * request. undici gives it back to its pool one event-loop turn after the body's end (client-h1.js:
 * "We must wait a full event loop cycle to reuse this socket"), and a request sent before that
 * opens another connection (over https, another TLS handshake). node-fetch (client-node 1.x)
 * needs no wait: its requests do not share connections.
 * @internal
 */
export async function connectionFreed(stream: Chunks): Promise<void> {
  if ('getReader' in stream) await nextTurn();
}

/**
 * A response body for client-node that reads `stream` (null: an answer without a body) no
 * further than MAX_ANSWER_BODY_BYTES: its text() and binary() reject, once the body passes the
 * cap, with `tooLarge()` — before the next chunk is held —, and the stream is let go of.
 * client-node (and answer-probe.ts) read it through text() or binary(), once.
 * @internal
 */
export function cappedBody(stream: Chunks | null, tooLarge: () => Error): ResponseContext['body'] {
  const bytes = async (): Promise<Uint8Array> => {
    if (stream === null) return new Uint8Array(0);
    const body = bodyReader(stream);
    const pieces: Uint8Array[] = [];
    let held = 0;
    for await (const chunk of body.chunks) {
      if (held + chunk.length > MAX_ANSWER_BODY_BYTES) {
        body.cancel();
        throw tooLarge();
      }
      pieces.push(chunk);
      held += chunk.length;
    }
    // the body is handed on once its connection is free, so the next request, sent as the caller
    // reads this answer, goes out on it
    await connectionFreed(stream);
    return pieces.length === 1 ? pieces[0]! : concat(pieces, held);
  };
  return {
    text: async () => new TextDecoder().decode(await bytes()),
    binary: async () => Buffer.from(await bytes()),
    stream: () => null, // read here, through text() or binary()
  } as unknown as ResponseContext['body'];
}

/**
 * The HTTP library to send each request with, in its per-call options: undefined (client-node's
 * own) for client-node 2.x, whose answers give their stream; for 1.x, whose answers give only
 * text() and buffer(), 1.x's own way of sending (its IsomorphicFetchHttpLibrary: the node-fetch
 * it depends on, with the URL, method, body, headers, AbortSignal and agent of the
 * RequestContext), whose answers also give their body's stream, for `cappedBody` to read. 1.x is
 * told by its RequestContext, which carries an http.Agent (getAgent) where 2.x's carries an undici
 * Dispatcher (getDispatcher).
 * @internal
 */
export function streamingHttpLibrary(): HttpLibrary | undefined {
  if (typeof (RequestContext.prototype as unknown as { getDispatcher?: unknown }).getDispatcher === 'function') return undefined;
  return {
    send(request: RequestContext) {
      const agent = (request as unknown as { getAgent?: () => unknown }).getAgent?.();
      const answer = nodeFetch()(request.getUrl(), {
        method: request.getHttpMethod().toString(),
        body: request.getBody(),
        headers: request.getHeaders(),
        signal: request.getSignal(),
        agent,
      }).then((response) => {
        const r = response as {
          status: number;
          headers: { forEach(f: (value: string, name: string) => void): void };
          body: AsyncIterable<Uint8Array>;
          text(): Promise<string>;
          buffer(): Promise<Buffer>;
        };
        const headers: Record<string, string> = {};
        r.headers.forEach((value, name) => {
          headers[name] = value;
        });
        const body = { text: () => r.text(), binary: () => r.buffer(), stream: () => r.body };
        return new ResponseContext(r.status, headers, body as unknown as ResponseContext['body']);
      });
      return new Observable(answer);
    },
  } as HttpLibrary;
}

/** The node-fetch that client-node 1.x depends on, loaded from client-node's own folder. @internal */
export function nodeFetch(): (url: string | URL, init: object) => Promise<unknown> {
  const fetch = requireFromClientNode('node-fetch', 'client-node 1.x sends requests with it', import.meta.url) as { default?: unknown };
  return (typeof fetch === 'function' ? fetch : fetch.default) as (url: string | URL, init: object) => Promise<unknown>;
}
