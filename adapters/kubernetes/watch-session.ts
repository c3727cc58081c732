// One watch request, from the moment it is sent to its outcome: client-go's watchHandler, plus
// deadlines of its own over the request's timer (see WatchSession). The informer's loop opens
// one session at a time (informer.ts watchOnce) and decides from its outcome what comes next:
//
//   sent ──► answered ──► events… ──► ended
//     │         │                       ├─ cleanly, or connection lost ──► 'closed' (resume)
//     │         │                       │    … within a second, no event ──► 'error' (very short watch)
//     │         │                       ├─ ERROR event 410/Expired/Gone ──► 'expired' (re-list)
//     │         │                       │  (its code or its reason); HTTP 410
//     │         │                       ├─ ERROR event of another kind ──► 'error'
//     │         │                       │  (an ERROR event ends the watch at once: aborted)
//     │         │                       ├─ an event apply() refuses ────► 'error' (aborted)
//     │         │                       │  (its object has no name, its type is not known)
//     │         │                       └─ a line the reader refuses, ──► 'error'
//     │         │                          or apply() threw (watch-request.ts)
//     │         ├─ no event for WATCH_QUIET_MS ─────────────────────────► 'closed' (resume)
//     │         └─ still open timeoutSeconds + WATCH_GRACE_SECONDS after it was sent ─► 'closed'
//     ├─ refused, or failed before an answer ─────────────────────────────► 'error'
//     └─ no answer within WATCH_ANSWER_MS ────────────────────────────────► 'error' (noAnswer)
import { describeBody } from './bodies.ts';
import { KubernetesApiError } from './errors.ts';
import type { ListerWatcher } from './lister-watcher.ts';
import { MAX_TIMEOUT_MS } from './numbers.ts';

/** How long a watch request may wait for the server's answer: client-node's default request timeout. */
const WATCH_ANSWER_MS = 30_000;
/**
 * How long an answered watch may go without any event, bookmarks included, before it is taken for
 * a connection that died silently and resumed: kube-apiserver sends a bookmark each minute. A
 * server that sends none costs a resumed watch (no list) now and then.
 */
const WATCH_QUIET_MS = 150_000;
/** How long past the timeoutSeconds asked of the server an open watch is trusted. */
const WATCH_GRACE_SECONDS = 60;

/** A watch that ends this soon after its answer, with no event, is a failure (client-go's "very short watch"). */
const VERY_SHORT_WATCH_MS = 1000;

/** The failure of a watch the server answered and ended at once, with no event. */
function veryShortWatch(cause: unknown, withinMs: number): Error {
  return new Error(
    `very short watch: the API server (or a proxy in front of it) ended the watch within ${withinMs / 1000} s of its answer, with no event`,
    cause === null || cause === undefined ? undefined : { cause },
  );
}

/** The failure of a watch whose ERROR event carries no Status with an HTTP code. */
function notAStatus(object: unknown): Error {
  return new Error(`the API server sent a watch ERROR event whose object is not a Status with an HTTP code: ${describeBody(object)}`);
}

/**
 * Whether a watch ERROR event's object says the history the watch asked for is gone, as
 * client-go's reflector decides it (reflector.go isExpiredError: apierrors.IsResourceExpired or
 * IsGone): a Status whose reason is Expired or Gone, whatever its code, or whose code is 410.
 * kube-apiserver writes both (410, Expired); an aggregated API server or a proxy may write the
 * reason alone, and such a watch is re-listed at once all the same, not failed and backed off.
 */
function saysExpired(object: unknown): boolean {
  if (typeof object !== 'object' || object === null) return false;
  const { code, reason } = object as { code?: unknown; reason?: unknown };
  return code === 410 || reason === 'Expired' || reason === 'Gone';
}

/** The failure of a watch request the server took and never answered. */
function noAnswer(cause: unknown): Error {
  return new Error(`the API server accepted the watch request but sent no answer within ${WATCH_ANSWER_MS / 1000} s`, { cause });
}

/**
 * How a watch ended, with the number of events (bookmarks included) it brought. A watch the
 * session itself ends as a connection that died silently counts as having brought at least one:
 * the loop resumes it at once, without backoff.
 * @internal
 */
export type WatchOutcome =
  | { kind: 'closed'; events: number }
  | { kind: 'expired'; events: number }
  | { kind: 'error'; error: unknown; events: number };

/** @internal */
export type WatchRequest = Parameters<ListerWatcher['watch']>[0];

/** What the informer does with a watch's events. @internal */
export interface WatchHandlers {
  /**
   * An event other than ERROR (ADDED, MODIFIED, DELETED, BOOKMARK, or one not known). An error
   * returned (an object that is not a named object, a type not known) ends the watch as a failure.
   */
  apply(type: string, object: unknown): Error | undefined;
  /** The server answered the watch request. */
  answered(): void;
}

/**
 * One watch: open() sends the request; `outcome` settles exactly once. Its deadlines hold
 * whatever the request's own timer does (one timer for the answer and for quiet, 90 s, in
 * watch-request.ts; a ListerWatcher may have none). A connection reset or closed mid-watch ends
 * the request at once, under Node and Deno alike; these deadlines are for one that died without
 * a word (a host gone, a network cut): no answer within WATCH_ANSWER_MS is a failure; a watch
 * without any event for WATCH_QUIET_MS, or still open well past the timeoutSeconds asked of the
 * server, is a connection that died silently: resumed.
 * @internal
 */
export class WatchSession {
  readonly outcome: Promise<WatchOutcome>;
  private resolve!: (o: WatchOutcome) => void;
  private events = 0;
  /** The server answered the watch request: client-node handed back its abort (after the headers). */
  private isAnswered = false;
  /**
   * When it was answered, on performance.now(): a monotonic clock, so that a wall clock set back
   * or forward meanwhile (NTP, a restored VM) neither makes a long watch very short nor a very
   * short one long.
   */
  private answeredAt = 0;
  private settled = false;
  private stopped = false;
  /** Aborts the watch; set once it is answered, unset once settled. */
  private abort: (() => void) | undefined;
  /** Aborts the request itself, answered or not: a settled session lets go of its connection. */
  private readonly requestAbort = new AbortController();
  /** First the wait for the answer (WATCH_ANSWER_MS), then, once answered, the watch's lifetime. */
  private deadline: ReturnType<typeof setTimeout> | undefined;
  /** The wait for the next event (WATCH_QUIET_MS). */
  private quiet: ReturnType<typeof setTimeout> | undefined;
  /**
   * An answered watch that ended: resumed — unless it ended within a second with no event,
   * which client-go's reflector takes for a failure ("very short watch") and re-lists after:
   * a server or proxy that cuts every watch at once would otherwise freeze the cache while
   * every state said synced. A watch asked to last 1 s ends a little under a second after its
   * answer (kube-apiserver starts its timer before it answers): for it, half a second.
   */
  private readonly veryShortMs: number;

  constructor(
    private readonly lw: ListerWatcher,
    private readonly request: WatchRequest,
    private readonly handlers: WatchHandlers,
  ) {
    this.outcome = new Promise<WatchOutcome>((resolve) => {
      this.resolve = resolve;
    });
    this.veryShortMs = Math.min(VERY_SHORT_WATCH_MS, request.timeoutSeconds * 500);
  }

  /**
   * Sends the request and starts the answer deadline. Apart from the constructor, so that the
   * informer holds the session (for stop()) before anything the request does can reach it.
   */
  open(): void {
    this.deadline = setTimeout(() => this.answerDeadlinePassed(), WATCH_ANSWER_MS);
    this.lw
      .watch(
        { ...this.request, signal: this.requestAbort.signal },
        (type, object) => this.onEvent(type, object),
        (err) => this.onDone(err),
      )
      .then(
        (abort) => this.onAnswer(abort),
        (err: unknown) => this.onDone(err ?? new Error('watch failed')),
      );
  }

  /** Ends the watch for the informer's stop(): aborted if answered; the loop stops waiting for it either way. */
  stop(): void {
    this.stopped = true;
    this.abort?.();
    this.abort = undefined;
    this.finish({ kind: 'closed', events: this.events });
  }

  private onAnswer(abort: () => void): void {
    this.isAnswered = true;
    this.answeredAt = performance.now();
    if (this.stopped || this.settled) return abort();
    this.abort = abort;
    this.awaitNextEvent();
    this.handlers.answered();
  }

  private onEvent(type: string, object: unknown): void {
    if (this.stopped || this.settled) return;
    if (this.isAnswered) this.awaitNextEvent();
    const obj = object as { code?: number };
    if (type === 'ERROR') {
      // client-go's watchHandler returns at an ERROR event: the watch ends there, whether or not
      // the server closes the stream, and nothing after it on the stream is applied
      this.abort?.();
      if (saysExpired(object)) return this.finish({ kind: 'expired', events: this.events });
      // a Status says what failed (the informer's translate reads its code and message); anything
      // else (a proxy's or a broken server's) would be said as "[object Object]": said as what came
      if (typeof obj?.code !== 'number') return this.finish({ kind: 'error', error: notAStatus(object), events: this.events });
      return this.finish({ kind: 'error', error: { code: obj.code, statusCode: obj.code, body: obj }, events: this.events });
    }
    const failure = this.handlers.apply(type, object);
    if (failure !== undefined) {
      // As client-go's watch when an event does not decode: the watch fails, the informer re-lists.
      this.abort?.();
      return this.finish({ kind: 'error', error: failure, events: this.events });
    }
    this.events++;
  }

  private onDone(err: unknown): void {
    const events = this.events;
    if (err) {
      const e = err as { statusCode?: unknown; code?: unknown; name?: unknown };
      if (e.statusCode === 410 || e.code === 410) return this.finish({ kind: 'expired', events });
      if (e.name === 'TimeoutError') {
        // client-node's timer covers both the wait for the answer's headers and, once they
        // came, the quiet time between events. The latter is no failure: resume from the
        // last rv. The former is a server (or a proxy in front of it) that took the request
        // and never answered: a failure, reported and followed by a relist, or the cache
        // would freeze while every state said synced.
        if (this.isAnswered) return this.finish({ kind: 'closed', events: events || 1 });
        return this.finish({ kind: 'error', error: noAnswer(err), events });
      }
      // The stream itself refused: a line that is no event, or an event the informer failed
      // to apply. Something may be lost: a failure, re-listed after the backoff.
      if (err instanceof KubernetesApiError) return this.finish({ kind: 'error', error: err, events });
      // A connection lost after the answer (reset, the server going away): every event up
      // to the informer's rv has been applied, so resume from it, as client-go does for such an end.
      if (this.isAnswered) return this.finish(this.ended(err));
      return this.finish({ kind: 'error', error: err, events });
    }
    this.finish(this.ended(null));
  }

  /** An answered watch's end: resumed, or a very short watch. */
  private ended(err: unknown): WatchOutcome {
    const events = this.events;
    return events === 0 && performance.now() - this.answeredAt < this.veryShortMs
      ? { kind: 'error', error: veryShortWatch(err, this.veryShortMs), events }
      : { kind: 'closed', events };
  }

  /** WATCH_ANSWER_MS after the request: a failure if unanswered; else the lifetime deadline starts. */
  private answerDeadlinePassed(): void {
    if (!this.isAnswered) return this.finish({ kind: 'error', error: noAnswer(undefined), events: this.events });
    this.deadline = setTimeout(
      () => this.endSilentWatch(),
      Math.min(MAX_TIMEOUT_MS, (this.request.timeoutSeconds + WATCH_GRACE_SECONDS) * 1000 - WATCH_ANSWER_MS), // setTimeout's limit: a longer delay would fire at once
    );
  }

  /** (Re)starts the wait for the next event: none within WATCH_QUIET_MS, and the watch is resumed. */
  private awaitNextEvent(): void {
    if (this.quiet !== undefined) clearTimeout(this.quiet);
    this.quiet = setTimeout(() => this.endSilentWatch(), WATCH_QUIET_MS);
  }

  /** A watch taken for a connection that died silently: aborted, and resumed at once. */
  private endSilentWatch(): void {
    this.abort?.();
    this.finish({ kind: 'closed', events: this.events || 1 });
  }

  private finish(o: WatchOutcome): void {
    if (this.settled) return;
    this.settled = true;
    if (this.deadline !== undefined) clearTimeout(this.deadline);
    if (this.quiet !== undefined) clearTimeout(this.quiet);
    this.abort = undefined;
    // Stopped, or given up on before the answer: no request is left open behind the loop (a
    // request already ended ignores this).
    this.requestAbort.abort();
    this.resolve(o);
  }
}
