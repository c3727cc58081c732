// The dry-run view (upstream dryRunAllocator): checks what a call would check, persists nothing.
import { readMember } from './input.ts';
import { checkParentRef } from './records.ts';
import { deleteErrorHandler } from './store.ts';
import type { DeleteErrorHandler, IPAllocator, IPFamily, ParentRef } from './types.ts';

/** The DryRun view (upstream dryRunAllocator) over either allocator class. */
export interface DryRunTarget extends IPAllocator {
  /** Ready check, parse and range check without persisting or counting anything. */
  checkAllocate(ip: string): void;
  /** What allocateNext checks first — not destroyed, the owner, ready — then the network address. */
  checkAllocateNext(owner: ParentRef | undefined): string;
  /** What release checks before it writes: not destroyed, and the text parses. */
  checkRelease(ip: string): void;
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

/** Registers `view` as a dry run (isDryRun): in the set, and marked; returns it. */
export function markDryRun<T extends object>(view: T): T {
  dryRunViews.add(view);
  Object.defineProperty(view, DRY_RUN_MARK, { value: true });
  return view;
}

/**
 * Whether `a` is a dry-run view: one of this copy's (WeakSet.has runs nothing of the caller's),
 * or an object that answers the mark. That read may run a Proxy's trap, whose error is thrown as
 * InvalidArgumentError naming `what` (readMember): ask once, and keep the answer.
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
    return this.real.cidr;
  }
  get ipFamily(): IPFamily {
    return this.real.ipFamily;
  }
  get size(): bigint {
    return this.real.size;
  }
  async allocate(ip: string, owner?: ParentRef): Promise<void> {
    this.real.checkAllocate(ip);
    checkParentRef(owner); // the real call refuses such an owner (InvalidArgumentError)
  }
  async allocateNext(owner?: ParentRef): Promise<string> {
    return this.real.checkAllocateNext(owner);
  }
  async release(ip: string, onDeleteError?: DeleteErrorHandler): Promise<void> {
    this.real.checkRelease(ip);
    deleteErrorHandler(onDeleteError); // as the real release refuses it; a dry run deletes nothing to tell it
  }
  has(ip: string): Promise<boolean> {
    return this.real.has(ip);
  }
  forEach(fn: (ip: string) => void): void {
    this.real.forEach(fn);
  }
  used(): number {
    return this.real.used();
  }
  free(): bigint {
    return this.real.free();
  }
  dryRun(): IPAllocator {
    return this;
  }
  enableMetrics(_registry?: unknown): void {}
  destroy(): void {}
}
