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
// A request the server throttles (429 Too Many Requests: API Priority and Fairness on a busy
// cluster) is sent again after the wait the server asks for (Retry-After, 1 to 60 s), up to 10
// times, within the request's one deadline, as client-go does; close() ends the wait too. The
// server turned it away before handling it, so even a create is safe to send again.
//
// Watches are not made here: a watch is meant to stay open; the informer gives it deadlines of
// its own (informer.ts).
import { Observable, type ConfigurationOptions, type ObservableMiddleware } from '@kubernetes/client-node';
import { InvalidArgumentError, quoteInput } from '../errors.ts';
import { KubernetesApiError, translate } from './errors.ts';

/** The request timeout when none is given: 30 s, client-node's Watch connect timeout. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** setTimeout's limit (2^31 − 1 ms). */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** The `requestTimeoutMs` option: undefined → the default; a positive number of ms, or Infinity for none. */
export function requestTimeoutOption(value: unknown, owner: string): number {
  if (value === undefined) return DEFAULT_REQUEST_TIMEOUT_MS;
  if (typeof value === 'number' && value >= 1 && (value <= MAX_TIMEOUT_MS || value === Infinity)) return value;
  throw new InvalidArgumentError(
    `${owner}: requestTimeoutMs must be a number of milliseconds from 1 to ${MAX_TIMEOUT_MS} or Infinity, got ${quoteInput(value)}`,
  );
}

/** How many times a throttled request (429) is sent again: client-go's default. */
const MAX_THROTTLED_RETRIES = 10;

/** What a timed-out or aborted request was, for the error. */
export interface RequestTarget {
  verb: 'create' | 'delete' | 'get' | 'list';
  /** e.g. ipaddresses.networking.k8s.io */
  resource: string;
  /** The object name; undefined for a list. */
  name?: string | undefined;
}

export class ApiRequests {
  private readonly inFlight = new Set<AbortController>();

  /**
   * @param server the API server's URL, for messages
   * @param timeoutMs per request; Infinity for none
   */
  constructor(
    readonly server: string,
    readonly timeoutMs: number,
  ) {}

  /**
   * Runs `call`, handing it the client-node options that attach this request's AbortSignal, and
   * again after the server's wait while it answers 429 with one (at most 10 times). The deadline
   * covers the whole request, its waits and attempts included, as client-go's does: when it
   * passes, the request rejects with a KubernetesApiError (`timeoutMs` set); when aborted first,
   * with the abortAll reason; otherwise as `call` does (the caller translates). `onThrottled`
   * hears each 429 that is waited out, as it comes (a list's caller reports it meanwhile).
   */
  async run<T>(
    target: RequestTarget,
    call: (options: ConfigurationOptions) => Promise<T>,
    onThrottled?: (error: KubernetesApiError) => void,
  ): Promise<T> {
    const controller = new AbortController();
    const signal = controller.signal;
    this.inFlight.add(controller);
    let throttled = 0;
    let deadline: ReturnType<typeof setTimeout> | undefined;
    if (this.timeoutMs !== Infinity) {
      deadline = setTimeout(() => controller.abort(this.timeoutError(target, throttled)), this.timeoutMs);
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
          return await Promise.race([call(withSignal(signal)), aborted]);
        } catch (e) {
          const throttle = !signal.aborted && throttled < MAX_THROTTLED_RETRIES ? throttledFor(e, target) : undefined;
          if (throttle === undefined) throw e;
          throttled++;
          onThrottled?.(throttle.error);
          await Promise.race([new Promise<void>((resolve) => (wait = setTimeout(resolve, throttle.seconds * 1000))), aborted]);
        }
      }
    } finally {
      if (deadline !== undefined) clearTimeout(deadline);
      if (wait !== undefined) clearTimeout(wait);
      signal.removeEventListener('abort', onAbort!);
      this.inFlight.delete(controller);
    }
  }

  /** Aborts every request in flight: each rejects with its own `reason()`, and its connection is dropped. */
  abortAll(reason: () => Error): void {
    for (const controller of [...this.inFlight]) controller.abort(reason());
  }

  private timeoutError(target: RequestTarget, throttled: number): KubernetesApiError {
    const waits = throttled === 0 ? '' : `; the server throttled it (429) ${throttled === 1 ? 'once' : `${throttled} times`} meanwhile`;
    return new KubernetesApiError(
      target.verb,
      target.resource,
      target.name,
      undefined,
      undefined,
      `no answer from ${this.server} within ${this.timeoutMs} ms (requestTimeoutMs${waits})`,
      undefined,
      this.timeoutMs,
    );
  }
}

/**
 * The seconds to wait before sending a throttled request (429) again, with the 429 translated,
 * or undefined when `err` is no throttling or names no wait. As client-go: the Retry-After
 * header (kube-apiserver's own throttling answers with it and a text body), here also the
 * Status's retryAfterSeconds; kept to 1..60 s. A 429 naming no wait is not sent again
 * (client-go's checkWait).
 */
function throttledFor(err: unknown, target: RequestTarget): { seconds: number; error: KubernetesApiError } | undefined {
  if (err instanceof KubernetesApiError) return undefined; // ours (a timeout) or already translated: not the server's 429
  const api = translate(err, target.verb, target.resource, target.name);
  if (!(api instanceof KubernetesApiError) || api.code !== 429) return undefined;
  const headers = (err as { headers?: unknown }).headers;
  const header = typeof headers === 'object' && headers !== null ? (headers as Record<string, unknown>)['retry-after'] : undefined;
  const fromHeader = typeof header === 'string' && /^\s*\d+\s*$/.test(header) ? Number(header) : undefined;
  const asked = fromHeader ?? api.status?.details?.retryAfterSeconds;
  if (typeof asked !== 'number' || !Number.isFinite(asked)) return undefined;
  return { seconds: Math.min(60, Math.max(1, asked)), error: api };
}

/** client-node per-call options whose middleware puts `signal` on the request (1.x and 2.x alike). */
function withSignal(signal: AbortSignal): ConfigurationOptions {
  const middleware: ObservableMiddleware = {
    pre(context) {
      context.setSignal(signal);
      return new Observable(Promise.resolve(context));
    },
    post(context) {
      return new Observable(Promise.resolve(context));
    },
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}
