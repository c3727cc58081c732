import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, InvalidCIDRError } from '../adapters/errors.ts';
import { seededRandom } from '../adapters/random.ts';
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

  // Regression: a watcher unsubscribed and subscribed again by an earlier watcher during a
  // delivery got that change twice (its replay, then the change itself); and one watcher
  // subscribed twice was one subscription, where MemoryStore's cache counts two.
  it('a watcher subscribed again during a delivery gets that change once, in its replay; one subscribed twice gets each change twice', () => {
    const cidrs = new InMemoryServiceCIDRs();
    const again: string[] = [];
    const againWatcher = logging(again);
    let offAgain = (): void => {};
    cidrs.subscribe(
      logging([], (kind, sc) => {
        if (kind === '+' && sc.name === 'a') {
          offAgain();
          offAgain = cidrs.subscribe(againWatcher);
        }
      }),
    );
    offAgain = cidrs.subscribe(againWatcher);
    const twice: string[] = [];
    const twiceWatcher = logging(twice);
    const offFirst = cidrs.subscribe(twiceWatcher);
    cidrs.subscribe(twiceWatcher);
    cidrs.addServiceCIDR('a', ['10.0.0.0/28']);
    offFirst();
    cidrs.deleteServiceCIDR('a');
    expect(again).toEqual(['+a', '-a']);
    expect(twice).toEqual(['+a', '+a', '-a']);
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

// A property over random runs: watchers that, from inside their callbacks and replays, add,
// update and delete ServiceCIDRs, subscribe new watchers, unsubscribe others and throw. Each
// watcher builds the objects from what it is given; every one still subscribed ends with the
// source's objects, none is given the delete of an object it does not hold, and none hears of
// anything once its unsubscribe has returned.
describe('InMemoryServiceCIDRs: watchers changing the source from inside deliveries and replays', () => {
  interface Seen {
    readonly objects: Map<string, ServiceCIDR>;
    readonly wrong: string[];
    unsubscribe: (() => void) | null;
    unsubscribed: boolean;
  }

  /** What went wrong for each watcher of the run `seed`. */
  function run(seed: number): string[][] {
    const random = seededRandom(seed);
    const below = (n: number) => random.nextU32() % n;
    const cidrs = new InMemoryServiceCIDRs({ onWatcherError: () => {} });
    const all: Seen[] = [];
    let steps = 60;
    const step = (): void => {
      if (steps-- <= 0) return;
      const names = cidrs.list().map((sc) => sc.name);
      const any = () => names[below(names.length)]!;
      switch (below(6)) {
        case 0: {
          // few names: one deleted comes back, its delete and its add queued one behind the other
          const name = `sc-${below(8)}`;
          if (!names.includes(name)) cidrs.addServiceCIDR(name, [`10.${below(256)}.0.0/24`]);
          return;
        }
        case 1:
          if (names.length > 0) cidrs.deleteServiceCIDR(any());
          return;
        case 2:
          if (names.length > 0) cidrs.setReady(any(), below(2) === 0);
          return;
        case 3:
          subscribeOne();
          return;
        case 4: {
          const live = all.filter((s) => s.unsubscribe !== null && !s.unsubscribed);
          const s = live[below(live.length)];
          if (s === undefined) return;
          s.unsubscribed = true;
          s.unsubscribe!();
          return;
        }
        default:
          throw new Error('watcher bug');
      }
    };
    const subscribeOne = () => {
      const s: Seen = { objects: new Map(), wrong: [], unsubscribe: null, unsubscribed: false };
      all.push(s);
      s.unsubscribe = cidrs.subscribe({
        onAdd: (sc) => {
          if (s.unsubscribed) s.wrong.push(`+${sc.name} after its unsubscribe`);
          s.objects.set(sc.name, sc);
          if (below(2) === 0) step();
        },
        onDelete: (sc) => {
          if (s.unsubscribed) s.wrong.push(`-${sc.name} after its unsubscribe`);
          if (!s.objects.has(sc.name)) s.wrong.push(`-${sc.name}, never given`);
          s.objects.delete(sc.name);
          if (below(2) === 0) step();
        },
      });
    };
    cidrs.addServiceCIDR('first', ['10.0.0.0/24']);
    subscribeOne();
    while (steps > 0) {
      try {
        step();
      } catch {
        // a throw from outside any callback: nothing to report
      }
    }
    const objects = cidrs.list();
    return all.map((s) =>
      s.unsubscribed || (s.objects.size === objects.length && objects.every((sc) => s.objects.get(sc.name) === sc))
        ? s.wrong
        : [...s.wrong, 'ends with other objects than the source lists'],
    );
  }

  it("every watcher still subscribed ends with the source's objects, never given a delete it cannot apply (400 seeded runs)", () => {
    const wrong: string[] = [];
    for (let seed = 1; seed <= 400; seed++) {
      run(seed).forEach((each, i) => {
        for (const w of each) wrong.push(`seed ${seed}, watcher ${i}: ${w}`);
      });
    }
    expect(wrong).toEqual([]);
  });
});

describe('InMemoryServiceCIDRs: what it refuses, and in which order', () => {
  it('addServiceCIDR checks its arguments before it looks for the name: a bad ready or bad cidrs is named, not "already exists"', () => {
    // Regression: the existence check came first, so a call with a bad `ready` for a name that
    // existed said "already exists", and fixing the name then hit the real error
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('a', ['10.0.0.0/28']);
    expect(() => cidrs.addServiceCIDR('a', ['10.0.1.0/28'], { ready: 'yes' as never })).toThrow(
      new InvalidArgumentError('options.ready must be true, false or undefined, got "yes"'),
    );
    expect(() => cidrs.addServiceCIDR('a', ['10.0.1.1/28'])).toThrow(InvalidCIDRError);
    expect(() => cidrs.addServiceCIDR('a', ['10.0.1.0/28'])).toThrow(
      new InvalidArgumentError('servicecidrs.networking.k8s.io "a" already exists'),
    );
    expect(cidrs.list().map((sc) => sc.cidrs)).toEqual([['10.0.0.0/28']]);
  });

  it('addServiceCIDR refuses an `unvalidated` that is not a boolean, as it refuses such a `ready`', () => {
    // Regression: `{ unvalidated: 'yes' }` was taken as "validate" without a word
    const cidrs = new InMemoryServiceCIDRs();
    for (const [unvalidated, shown] of [
      ['yes', '"yes"'],
      [1, '1 (number)'],
    ] as const) {
      expect(() => cidrs.addServiceCIDR('a', ['10.0.0.0/28'], { unvalidated: unvalidated as never })).toThrow(
        new InvalidArgumentError(`options.unvalidated must be true, false or undefined, got ${shown}`),
      );
    }
    expect(() => cidrs.addServiceCIDR('a', ['10.0.0.0/28'], { unvalidated: null as never })).toThrow(/^options\.unvalidated must be/);
    expect(cidrs.list()).toEqual([]);
    expect(cidrs.addServiceCIDR('a', ['10.0.0.0/28'], { unvalidated: false }).cidrs).toEqual(['10.0.0.0/28']);
  });

  it('an empty name is refused as a name is required, not "not found", by every method that takes one', () => {
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('a', ['10.0.0.0/28']);
    const required = new InvalidArgumentError('ServiceCIDR metadata.name: Required value: name is required');
    expect(() => cidrs.addServiceCIDR('', ['10.0.1.0/28'])).toThrow(required);
    expect(() => cidrs.deleteServiceCIDR('')).toThrow(required);
    expect(() => cidrs.setReady('', false)).toThrow(required);
    expect(() => cidrs.markDeleting('')).toThrow(required);
    expect(() => cidrs.get('')).toThrow(required);
    expect(() => cidrs.deleteServiceCIDR('b')).toThrow(new InvalidArgumentError('servicecidrs.networking.k8s.io "b" not found'));
    expect(cidrs.list().map((sc) => [sc.name, sc.ready, sc.deletionTimestamp])).toEqual([['a', undefined, null]]);
  });
});
