// The dry-run view (upstream dryRunAllocator): checks what a call would check, persists nothing.
import { ErrNotReady, InvalidArgumentError } from './errors.ts';
import { readMember, unboundCall, unboundRead } from './input.ts';
import { INSPECT, type InspectOptions, inspection } from './inspect.ts';
import { checkParentRef } from './records.ts';
import { deleteErrorHandler, type DeleteErrorHandler, type ParentRef } from './store.ts';
import type { IPAllocator, IPFamily } from './types.ts';

/** The DryRun view (upstream dryRunAllocator) over either allocator class. */
export interface DryRunTarget extends IPAllocator {
  /** Ready check, parse and range check without persisting or counting anything. */
  checkAllocate(ip: string): void;
  /** What allocateNext checks first — not destroyed, the owner, ready — then the network address. */
  checkAllocateNext(owner: ParentRef | null | undefined): string;
  /** What release checks before it writes: not destroyed, and the text parses. */
  checkRelease(ip: string): void;
  /** An Allocator's (see Allocator.canAllocateNow); a ReferenceAllocator has none. */
  readonly canAllocateNow?: boolean;
}

/**
 * The dry-run views of this package (DryRunAllocator, and a MetaAllocator's view while no range
 * is ready): a view takes nothing, so a caller that gives back what a call took
 * (DualStackAllocator's rollback) has nothing to give back for one, and its has() answers for
 * the allocator it views, where the address may be another Service's. Known by identity (this
 * set), and by a mark each view carries under a key of the global symbol registry: the views of
 * another copy of this package (a second install, its CommonJS and ES builds side by side) carry
 * the same mark, and a Proxy of a view, or an object made from one (Object.create), answers it
 * from its target — where the set, of one copy and by identity, knows neither.
 */
const dryRunViews = new WeakSet<object>();
const DRY_RUN_MARK = Symbol.for('ipallocator.dryRun');

/** Registers `view` as a dry run (isDryRun): in the set, and marked; returns it. @internal */
export function markDryRun<T extends object>(view: T): T {
  dryRunViews.add(view);
  Object.defineProperty(view, DRY_RUN_MARK, { value: true });
  return view;
}

/**
 * Whether `a` is a dry-run view: one of this copy's (WeakSet.has runs nothing of the caller's),
 * or an object that answers the mark. That read may run a Proxy's trap, whose error is thrown as
 * InvalidArgumentError naming `what` (readMember): ask once, and keep the answer.
 * @internal
 */
export function isDryRun(a: unknown, what: string): boolean {
  if (typeof a !== 'object' || a === null) return false;
  return dryRunViews.has(a) || readMember(a, DRY_RUN_MARK, what) === true;
}

/**
 * Checks but persists nothing: allocate() checks readiness, syntax, range and the owner (no
 * metric, no existence check); allocateNext() checks the owner and readiness and returns the
 * network address; release() checks the text and onDeleteError (and that the allocator is not
 * destroyed) and deletes nothing; has/forEach/used/free delegate; dryRun() is itself;
 * destroy/enableMetrics no-ops.
 */
export class DryRunAllocator implements IPAllocator {
  constructor(private readonly real: DryRunTarget) {
    markDryRun(this);
  }
  get cidr(): string {
    return viewOf(this, 'cidr').real.cidr;
  }
  get ipFamily(): IPFamily {
    return viewOf(this, 'ipFamily').real.ipFamily;
  }
  get size(): bigint {
    return viewOf(this, 'size').real.size;
  }
  allocate(this: object, ip: string, owner?: ParentRef | null): Promise<void>;
  async allocate(this: DryRunAllocator, ip: string, owner?: ParentRef | null): Promise<void> {
    checkThis(this, 'allocate');
    this.real.checkAllocate(ip);
    checkParentRef(owner); // the real call refuses such an owner (InvalidArgumentError)
  }
  allocateNext(this: object, owner?: ParentRef | null): Promise<string>;
  async allocateNext(this: DryRunAllocator, owner?: ParentRef | null): Promise<string> {
    checkThis(this, 'allocateNext');
    return this.real.checkAllocateNext(owner);
  }
  /**
   * The allocator's canAllocateNow (Allocator.canAllocateNow): whether tryAllocateNextNow() may be
   * used. False for the dry run of a ReferenceAllocator, which allocates through allocateNext() only.
   */
  get canAllocateNow(): boolean {
    return viewOf(this, 'canAllocateNow').real.canAllocateNow === true;
  }
  /**
   * As allocateNext() here, in one synchronous step (Allocator.tryAllocateNextNow): the network
   * address, nothing reserved; null where allocateNext() would reject with ErrNotReady. Where
   * canAllocateNow is false, InvalidArgumentError.
   */
  tryAllocateNextNow(this: object, owner?: ParentRef | null): string | null;
  tryAllocateNextNow(this: DryRunAllocator, owner?: ParentRef | null): string | null {
    checkThis(this, 'tryAllocateNextNow');
    const can = this.real.canAllocateNow; // ErrDestroyed once the allocator is destroyed
    if (can === undefined) {
      throw new InvalidArgumentError(
        `tryAllocateNextNow is an Allocator's: this is the dry run of a ReferenceAllocator (${this.real.cidr}), which allocates through allocateNext() only`,
      );
    }
    if (!can) throw new InvalidArgumentError(`tryAllocateNextNow needs a store with synchronous operations (${this.real.cidr})`);
    try {
      return this.real.checkAllocateNext(owner);
    } catch (e) {
      if (e instanceof ErrNotReady) return null;
      throw e;
    }
  }
  release(this: object, ip: string, onDeleteError?: DeleteErrorHandler): Promise<void>;
  async release(this: DryRunAllocator, ip: string, onDeleteError?: DeleteErrorHandler): Promise<void> {
    checkThis(this, 'release');
    this.real.checkRelease(ip);
    deleteErrorHandler(onDeleteError); // as the real release refuses it; a dry run deletes nothing to tell it
  }
  has(this: object, ip: string): Promise<boolean>;
  has(this: DryRunAllocator, ip: string): Promise<boolean> {
    try {
      checkThis(this, 'has');
    } catch (e) {
      return Promise.reject(e);
    }
    return this.real.has(ip);
  }
  forEach(this: object, fn: (ip: string) => void): void;
  forEach(this: DryRunAllocator, fn: (ip: string) => void): void {
    checkThis(this, 'forEach');
    this.real.forEach(fn);
  }
  used(this: object): number;
  used(this: DryRunAllocator): number {
    checkThis(this, 'used');
    return this.real.used();
  }
  free(this: object): bigint;
  free(this: DryRunAllocator): bigint {
    checkThis(this, 'free');
    return this.real.free();
  }
  dryRun(this: object): IPAllocator;
  dryRun(this: DryRunAllocator): IPAllocator {
    checkThis(this, 'dryRun');
    return this;
  }
  enableMetrics(this: object, _registry?: unknown): void;
  enableMetrics(this: DryRunAllocator, _registry?: unknown): void {
    checkThis(this, 'enableMetrics');
  }
  destroy(this: object): void;
  destroy(this: DryRunAllocator): void {
    checkThis(this, 'destroy');
  }

  /**
   * What console.log and util.inspect show, in Node and Deno: the CIDR, used and free it answers
   * (those of the allocator it views), or that the allocator is destroyed (inspection).
   */
  [INSPECT](this: object, depth: number, options?: InspectOptions, inspect?: (value: unknown, options?: object) => string): string;
  [INSPECT](
    this: DryRunAllocator,
    depth: number,
    options?: InspectOptions,
    inspect?: (value: unknown, options?: object) => string,
  ): string {
    const live = () => ({ used: this.used(), free: this.free() });
    return inspection(this, DryRunAllocator, 'DryRunAllocator', () => ({ cidr: this.cidr }), live, depth, options, inspect);
  }
}

/**
 * Refuses a call of a view's method without its object (unboundCall), as the allocators do: a
 * view is not on the allocation path (its calls persist nothing), so it checks first.
 */
function checkThis(self: unknown, method: string): void {
  if (!(self instanceof DryRunAllocator)) throw unboundCall(self, 'DryRunAllocator', method);
}

/** `self`, a view whose getter is read, or the getter's unboundRead when it is none (checkThis). */
function viewOf(self: unknown, getter: string): DryRunAllocator {
  if (!(self instanceof DryRunAllocator)) throw unboundRead(self, 'DryRunAllocator', getter);
  return self;
}
