// The dry-run view (upstream dryRunAllocator): checks what a call would check, persists nothing.
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
 * is ready), known by identity: a view takes nothing, so a caller that gives back what a call
 * took (DualStackAllocator's rollback) has nothing to give back for one, and its has() answers
 * for the allocator it views, where the address may be another Service's.
 */
const dryRunViews = new WeakSet<object>();

/** Registers `view` as a dry run (isDryRun); returns it. */
export function markDryRun<T extends object>(view: T): T {
  dryRunViews.add(view);
  return view;
}

/** Whether `a` is a dry-run view of this package (WeakSet.has runs nothing of the caller's, no Proxy trap). */
export function isDryRun(a: unknown): boolean {
  return typeof a === 'object' && a !== null && dryRunViews.has(a);
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
