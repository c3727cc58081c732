// Small helpers for the Kubernetes store tests.
import type { IPAddressRecord, StoreCache, StoreWatcher } from '../../adapters/store.ts';

/**
 * Waits until `cond()` holds, checking after each turn of the event loop (and every few ms).
 * Asserts nothing about how long it took; the test timeout bounds it.
 */
export async function until(cond: () => boolean, what = 'condition'): Promise<void> {
  for (let i = 0; ; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, i < 50 ? 1 : 10));
    if (i > 20_000) throw new Error(`gave up waiting for ${what}`);
  }
}

/** A subscriber that mirrors the cache from onAdd/onDelete, and logs every call. */
export class Mirror implements StoreWatcher {
  readonly view = new Map<string, IPAddressRecord>();
  readonly log: string[] = [];
  /** Deletes of names the mirror did not hold (would be an invented delete). */
  readonly phantomDeletes: string[] = [];

  onAdd(r: IPAddressRecord): void {
    this.view.set(r.name, r);
    this.log.push(`+${r.name}`);
  }

  onDelete(r: IPAddressRecord): void {
    if (!this.view.delete(r.name)) this.phantomDeletes.push(r.name);
    this.log.push(`-${r.name}`);
  }

  names(): string[] {
    return [...this.view.keys()].sort();
  }
}

export function cacheNames(cache: StoreCache): string[] {
  return cache
    .list()
    .map((r) => r.name)
    .sort();
}
