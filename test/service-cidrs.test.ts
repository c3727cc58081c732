import { describe, expect, it } from 'vitest';
import { InMemoryServiceCIDRs, type ServiceCIDR, type ServiceCIDRWatcher } from '../adapters/service-cidrs.ts';

/** A watcher that logs `+name` / `-name` (an update of `name` is `+name` again), with `then` run after each log. */
function logging(log: string[], then?: (kind: '+' | '-', sc: ServiceCIDR) => void): ServiceCIDRWatcher {
  return {
    onAdd: (sc) => {
      log.push(`+${sc.name}`);
      then?.('+', sc);
    },
    onDelete: (sc) => {
      log.push(`-${sc.name}`);
      then?.('-', sc);
    },
  };
}

// Regression: a change a watcher made from inside the replay subscribe() gave it reached the
// watchers subscribed before it only, never the watcher itself; and a watcher that threw during its
// replay made subscribe() throw, with the rest of the replay skipped and the watcher left
// unsubscribed (onWatcherError never told). A MetaAllocator's onSkip runs inside that replay (its
// constructor's): an 'old' ServiceCIDR it deleted stayed a range, and allocations went on from it.
describe('InMemoryServiceCIDRs: the replay subscribe() gives', () => {
  it('a change the watcher makes from inside its replay reaches it, and every other watcher, after the replay', () => {
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('old', ['10.0.0.0/28']);
    cidrs.addServiceCIDR('other', ['10.0.2.0/28']);
    const early: string[] = [];
    cidrs.subscribe(logging(early));
    const seen: string[] = [];
    cidrs.subscribe(
      logging(seen, (kind, sc) => {
        if (kind === '+' && sc.name === 'old') {
          cidrs.addServiceCIDR('new', ['10.0.1.0/28']);
          cidrs.deleteServiceCIDR('old');
        }
      }),
    );
    expect(seen).toEqual(['+old', '+other', '+new', '-old']); // the replay whole, then the changes in order
    expect(early).toEqual(['+old', '+other', '+new', '-old']);
    expect(cidrs.list().map((sc) => sc.name)).toEqual(['other', 'new']);
  });

  it('a watcher subscribed from inside a delivery is replayed the objects as delivered so far, then the rest in order', () => {
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('a', ['10.0.0.0/28']);
    const late: string[] = [];
    const first: string[] = [];
    cidrs.subscribe(
      logging(first, (kind, sc) => {
        if (kind === '+' && sc.name === 'b') {
          cidrs.deleteServiceCIDR('a'); // queued behind the add of b
          cidrs.subscribe(logging(late)); // during the add of b: a and b delivered, the delete of a not yet
        }
      }),
    );
    cidrs.addServiceCIDR('b', ['10.0.1.0/28']);
    expect(late).toEqual(['+a', '+b', '-a']); // no delete of an object it was never given, no add twice
    expect(first).toEqual(['+a', '+b', '-a']);
  });

  it('a watcher that throws in its replay is reported, gets the rest of the replay and later changes, and stays subscribed', () => {
    const reported: string[] = [];
    const cidrs = new InMemoryServiceCIDRs({
      onWatcherError: (e, _watcher, event) => reported.push(`${(e as Error).message} (${event.kind} ${event.serviceCIDR.name})`),
    });
    cidrs.addServiceCIDR('a', ['10.0.0.0/28']);
    cidrs.addServiceCIDR('b', ['10.0.1.0/28']);
    const seen: string[] = [];
    const unsubscribe = cidrs.subscribe(
      logging(seen, (kind, sc) => {
        if (kind === '+' && sc.name === 'a') throw new Error('watcher bug');
      }),
    );
    cidrs.addServiceCIDR('c', ['10.0.2.0/28']);
    expect([seen, reported]).toEqual([['+a', '+b', '+c'], ['watcher bug (add a)']]);
    unsubscribe();
    cidrs.deleteServiceCIDR('c');
    expect(seen).toEqual(['+a', '+b', '+c']);
  });
});
