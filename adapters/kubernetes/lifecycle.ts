// What KubernetesStore and KubernetesServiceCIDRs share as owners of one informer: its state and
// counters, start, waitForSync, and close — written once here instead of forwarded twice.
//
//   new (start: true) ──► syncing ──► synced ⇄ relisting
//   new (start: false) ── start() ──┘              │
//                                   close() / [Symbol.dispose]() from any state ──► stopped
//
// After close() the owner is finished: every method throws (or, returning a promise, rejects)
// ErrDestroyed naming it (`KubernetesStore has been closed`: closedError), a pending waitForSync,
// the store's cache and the calls still in flight (their requests are aborted) included; the
// read-only properties (state, stats, lastError) stay readable, and unsubscribe functions keep
// working. close() is idempotent and synchronous (it aborts the watch and the requests and clears
// the timers; nothing is left to await), hence Symbol.dispose and not asyncDispose.
import { InvalidArgumentError } from '../errors.ts';
import { quoteInput } from '../quote.ts';
import { SAME_THREAD } from '../same-thread.ts';
import { type CachedRecord, closedError, type Informer, type InformerStats, type WaitForSyncOptions } from './informer.ts';
import type { InformerState } from './informer-state.ts';
import type { ApiRequests } from './requests.ts';

/**
 * The keys of the informer and the API requests an owner holds: symbols, which the published
 * declarations leave out with the members, so that a subclass's own member, whatever its name
 * (`informer`, a class field), cannot replace them. @internal
 */
export const INFORMER: unique symbol = Symbol('informer');
/** @internal (see INFORMER) */
export const REQUESTS: unique symbol = Symbol('requests');

export abstract class InformerLifecycle<R extends CachedRecord> {
  /**
   * Makes postMessage refuse the store or source, saying why (SAME_THREAD): the first own field of
   * each subclass's objects too (a base class's fields come first), so it is read first.
   */
  private readonly sameThreadOnly = SAME_THREAD;
  /** The informer this object owns (its `owner` names this object in errors). @internal */
  protected abstract readonly [INFORMER]: Informer<R>;
  /** The API requests this object makes (close() aborts those in flight). @internal */
  protected abstract readonly [REQUESTS]: ApiRequests;
  /**
   * Whether close() was called, in an object of its own rather than a field: a frozen owner
   * (Object.freeze) still closes, and one closed through a wrapper made with Object.create(owner)
   * is the owner closed, not the wrapper given a field of its own.
   */
  private readonly life = { closed: false };

  /** True once close() was called. */
  protected get closed(): boolean {
    return this.life.closed;
  }

  /** 'syncing' | 'synced' | 'relisting' | 'stopped'. */
  get state(): InformerState {
    if (!(this instanceof InformerLifecycle)) throw unboundRead(this, 'state');
    return this[INFORMER].state;
  }

  /** List/watch counters: a frozen snapshot, so that no assignment to it changes the informer's own. */
  get stats(): Readonly<InformerStats> {
    if (!(this instanceof InformerLifecycle)) throw unboundRead(this, 'stats');
    return Object.freeze({ ...this[INFORMER].stats });
  }

  /** The last list/watch failure, cleared once the cache is kept up to date again (a list, or a watch answered after one was refused). */
  get lastError(): Error | undefined {
    if (!(this instanceof InformerLifecycle)) throw unboundRead(this, 'lastError');
    return this[INFORMER].lastError;
  }

  /** Calls `listener(state, error?)` on every state change and on every list/watch failure; returns the unsubscriber. */
  onStateChange(this: object, listener: (state: InformerState, error?: Error) => void): () => void;
  onStateChange(this: InformerLifecycle<R>, listener: (state: InformerState, error?: Error) => void): () => void {
    checkThis(this, 'onStateChange');
    this.assertOpen();
    return this[INFORMER].onStateChange(listener);
  }

  /** Starts the list + watch (when constructed with `start: false`); a second call does nothing. */
  start(this: object): void;
  start(this: InformerLifecycle<R>): void {
    checkThis(this, 'start');
    this.assertOpen();
    this[INFORMER].start();
  }

  /**
   * Resolves once the first complete list has been applied (at once if it has). Rejects with
   * SyncTimeoutError after `timeoutMs` (naming the last list/watch failure: an unreachable
   * server never answers), with SyncDeniedError when Deno denies a permission the list needs
   * (`flag` says which: every retry is denied until it is granted), with SyncBlockedError when
   * the API server's URL has a port fetch never connects to (6000, 10080, …), or its proxy is of
   * a scheme no request goes through (no list is sent again), with `signal.reason` when
   * `signal` aborts, and with ErrDestroyed when closed before or meanwhile. Without options it
   * waits as long as it takes otherwise.
   */
  waitForSync(this: object, options?: WaitForSyncOptions): Promise<void>;
  waitForSync(this: InformerLifecycle<R>, options?: WaitForSyncOptions): Promise<void> {
    if (!(this instanceof InformerLifecycle)) return Promise.reject(unboundCall(this, 'waitForSync'));
    if (this.life.closed) return Promise.reject(closedError(this[INFORMER].owner));
    return this[INFORMER].waitForSync(options);
  }

  /**
   * Stops the list + watch for good, aborting the requests in flight. Afterwards every method
   * throws (or rejects with) ErrDestroyed, a pending waitForSync and the calls in flight included;
   * state, stats and lastError stay readable and unsubscribe functions keep working. Idempotent.
   */
  close(this: object): void;
  close(this: InformerLifecycle<R>): void {
    checkThis(this, 'close');
    if (this.life.closed) return;
    this.life.closed = true;
    this[INFORMER].stop();
    const destroyed = () => closedError(this[INFORMER].owner);
    this[REQUESTS].abortAll(destroyed);
    this[REQUESTS].closeConnections(destroyed);
  }

  /** close(), for `using`. */
  [Symbol.dispose](this: object): void;
  [Symbol.dispose](this: InformerLifecycle<R>): void {
    checkThis(this, '[Symbol.dispose]');
    this.close();
  }

  /** Throws ErrDestroyed once closed. */
  protected assertOpen(): void {
    if (this.life.closed) throw closedError(this[INFORMER].owner);
  }
}

/**
 * InvalidArgumentError for a method of KubernetesStore or KubernetesServiceCIDRs called without
 * its object (`self`: what `this` was), as unboundCall says it of the other classes' methods. The
 * method is the same function on both classes, so the message names both.
 */
function unboundCall(self: unknown, method: string): InvalidArgumentError {
  const member = method.startsWith('[') ? method : `.${method}`;
  return new InvalidArgumentError(
    `KubernetesStore or KubernetesServiceCIDRs: ${method}() was called without its object (this was ${quoteInput(self)}): call it on the object, store${member}(…); where a function is passed (a callback, a method taken off the object), pass an arrow function, (…) => store${member}(…)`,
  );
}

/** InvalidArgumentError for a getter read without its object, as unboundCall says it of a method. */
function unboundRead(self: unknown, getter: string): InvalidArgumentError {
  return new InvalidArgumentError(
    `KubernetesStore or KubernetesServiceCIDRs: ${getter} was read without its object (this was ${quoteInput(self)}): read it on the object, store.${getter}`,
  );
}

/**
 * Refuses a call of a method of KubernetesStore or KubernetesServiceCIDRs without its object
 * (unboundCall). Off the allocation path: checked first. @internal
 */
export function checkThis(self: unknown, method: string): void {
  if (!(self instanceof InformerLifecycle)) throw unboundCall(self, method);
}
