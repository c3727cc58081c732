// InMemoryServiceCIDRs and validateServiceCIDRSpec against hostile callers: bad arguments get
// InvalidArgumentError with nothing changed, and a watcher that writes or throws from inside its
// callbacks neither reorders nor hides the events the other watchers see.
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, InvalidCIDRError } from '../../adapters/errors.ts';
import {
  InMemoryServiceCIDRs,
  type ServiceCIDRWatcher,
  serviceCIDRAllocatable,
  validateServiceCIDRSpec,
} from '../../adapters/service-cidrs.ts';
import { dns1123SubdomainProblems } from '../../adapters/label-rules.ts';

/** A watcher that writes down what it sees. */
function recorder(log: string[], name: string): ServiceCIDRWatcher {
  return {
    onAdd: (sc) => log.push(`${name} add ${sc.name}`),
    onDelete: (sc) => log.push(`${name} delete ${sc.name}`),
  };
}

describe('InMemoryServiceCIDRs refuses bad arguments and changes nothing', () => {
  it.each([
    ['an empty name', '', ['10.0.0.0/24'], undefined],
    ['a name with capitals', 'Kubernetes', ['10.0.0.0/24'], undefined],
    ['a name with a space', 'a b', ['10.0.0.0/24'], undefined],
    ['a name of 254 characters', 'a'.repeat(254), ['10.0.0.0/24'], undefined],
    ['a number as name', 5, ['10.0.0.0/24'], undefined],
    ['null cidrs', 'x', null, undefined],
    ['null options', 'x', ['10.0.0.0/24'], null],
    ['ready as a string', 'x', ['10.0.0.0/24'], { ready: 'yes' }],
    ['unvalidated, but cidrs not an array', 'x', '10.0.0.0/24', { unvalidated: true }],
  ])('addServiceCIDR with %s → InvalidArgumentError', (_label, name, cidrs, options) => {
    const src = new InMemoryServiceCIDRs();
    const log: string[] = [];
    src.subscribe(recorder(log, 'w'));
    expect(() => src.addServiceCIDR(name as never, cidrs as never, options as never)).toThrow(InvalidArgumentError);
    expect(src.list()).toEqual([]);
    expect(log).toEqual([]);
  });
  it("a name that is not a DNS subdomain is refused in the API server's words, each problem named", () => {
    const src = new InMemoryServiceCIDRs();
    const refusal = (name: unknown) => {
      try {
        src.addServiceCIDR(name as never, ['10.0.0.0/24']);
      } catch (e) {
        return (e as Error).message;
      }
      return 'accepted';
    };
    for (const name of ['A', 'a_b', '-a', 'a.', 'a/b']) {
      expect(refusal(name)).toBe(`ServiceCIDR metadata.name: Invalid value: "${name}": ${dns1123SubdomainProblems(name).join('; ')}`);
    }
    expect(refusal('a'.repeat(254))).toMatch(/: must be no more than 253 characters$/);
    expect(dns1123SubdomainProblems('A'.repeat(254))).toHaveLength(2);
    expect(refusal('A'.repeat(254))).toContain(dns1123SubdomainProblems('A'.repeat(254)).join('; '));
    expect(refusal('')).toBe('ServiceCIDR metadata.name: Required value: name is required');
    expect(refusal(5)).toBe('ServiceCIDR metadata.name: Invalid value: 5 (number): must be a string');
  });
  it('setReady with a non-boolean → InvalidArgumentError, object unchanged', () => {
    const src = new InMemoryServiceCIDRs();
    const sc = src.addServiceCIDR('x', ['10.0.0.0/24']);
    expect(() => src.setReady('x', 'yes' as never)).toThrow(InvalidArgumentError);
    expect(src.get('x')).toBe(sc);
  });
  it.each([null, {}, { onAdd: () => {} }, 'watcher'])('subscribe(%j) → InvalidArgumentError', (w) => {
    expect(() => new InMemoryServiceCIDRs().subscribe(w as never)).toThrow(InvalidArgumentError);
  });
  it('serviceCIDRAllocatable(null) → InvalidArgumentError', () => {
    expect(() => serviceCIDRAllocatable(null as never)).toThrow(InvalidArgumentError);
  });
  it("validateServiceCIDRSpec: the API server's rules, typed", () => {
    expect(() => validateServiceCIDRSpec([])).toThrow(InvalidArgumentError);
    expect(() => validateServiceCIDRSpec(['10.0.0.0/24', 'fd00::/120', '10.1.0.0/24'])).toThrow(InvalidArgumentError);
    expect(() => validateServiceCIDRSpec(['10.0.0.0/24', '10.1.0.0/24'])).toThrow(InvalidArgumentError);
    expect(() => validateServiceCIDRSpec(['10.0.0.0/33'])).toThrow(InvalidCIDRError);
    // the API server stores a ServiceCIDR over the IPv4-mapped block (its allocators here refuse
    // the range); it refuses one whose address is IPv4-mapped
    expect(() => validateServiceCIDRSpec(['::/64'])).not.toThrow();
    expect(() => validateServiceCIDRSpec(['::ffff:10.0.0.0/104'])).toThrow(InvalidCIDRError);
    expect(() => validateServiceCIDRSpec(['10.0.0.0/24', 'fd00::/120'])).not.toThrow();
  });
  it('validateServiceCIDRSpec and addServiceCIDR given the spec instead of its cidrs array: the message says to pass the array', () => {
    const spec = { cidrs: ['10.0.0.0/24'] };
    const hint = new InvalidArgumentError(
      'spec.cidrs must hold 1 or 2 CIDRs, got a value of type object: pass its `cidrs` array, not the object holding it',
    );
    expect(() => validateServiceCIDRSpec(spec as never)).toThrow(hint);
    expect(() => validateServiceCIDRSpec({ name: 'a', cidrs: ['10.0.0.0/24'] } as never)).toThrow(hint); // a whole ServiceCIDR
    const src = new InMemoryServiceCIDRs();
    expect(() => src.addServiceCIDR('a', spec as never)).toThrow(hint);
    expect(() => src.addServiceCIDR('a', spec as never, { unvalidated: true })).toThrow(
      new InvalidArgumentError(
        'spec.cidrs must be an array, got a value of type object: pass its `cidrs` array, not the object holding it',
      ),
    );
    // a ServiceCIDR as the API server answers it holds the array under spec
    const object = { metadata: { name: 'a' }, spec };
    const specHint = 'pass its `spec.cidrs` array, not the object holding it';
    expect(() => validateServiceCIDRSpec(object as never)).toThrow(
      new InvalidArgumentError(`spec.cidrs must hold 1 or 2 CIDRs, got a value of type object: ${specHint}`),
    );
    expect(() => src.addServiceCIDR('a', object as never, { unvalidated: true })).toThrow(
      new InvalidArgumentError(`spec.cidrs must be an array, got a value of type object: ${specHint}`),
    );
    expect(src.list()).toEqual([]);
    // an object without a cidrs field gets no hint
    expect(() => validateServiceCIDRSpec({} as never)).toThrow(
      new InvalidArgumentError('spec.cidrs must hold 1 or 2 CIDRs, got a value of type object'),
    );
    expect(() => validateServiceCIDRSpec(spec.cidrs)).not.toThrow();
  });
});

describe('InMemoryServiceCIDRs delivers every change to every watcher, in order', () => {
  it('a watcher that deletes an object from inside its onAdd: the others see add, then delete', () => {
    const src = new InMemoryServiceCIDRs();
    const log: string[] = [];
    src.subscribe({
      onAdd: (sc) => {
        log.push(`A add ${sc.name}`);
        if (sc.name === 'short-lived') src.deleteServiceCIDR(sc.name);
      },
      onDelete: (sc) => log.push(`A delete ${sc.name}`),
    });
    src.subscribe(recorder(log, 'B'));
    src.addServiceCIDR('short-lived', ['10.0.0.0/24']);
    expect(log.filter((l) => l.startsWith('B'))).toEqual(['B add short-lived', 'B delete short-lived']);
    expect(log.filter((l) => l.startsWith('A'))).toEqual(['A add short-lived', 'A delete short-lived']);
    expect(src.list()).toEqual([]);
  });
  it('a watcher that throws: the change stands, the other watchers still see it, the error goes to onWatcherError', () => {
    const errors: string[] = [];
    const src = new InMemoryServiceCIDRs({
      onWatcherError: (e, _w, event) => errors.push(`${event.kind} ${event.serviceCIDR.name}: ${(e as Error).message}`),
    });
    const log: string[] = [];
    src.subscribe({
      onAdd: () => {
        throw new Error('boom');
      },
      onDelete: () => {},
    });
    src.subscribe(recorder(log, 'B'));
    expect(() => src.addServiceCIDR('x', ['10.0.0.0/24'])).not.toThrow();
    expect(log).toEqual(['B add x']);
    expect(errors).toEqual(['add x: boom']);
    expect(src.list().map((s) => s.name)).toEqual(['x']);
  });
  it("by default a watcher's error is rethrown outside the change (where nothing can catch it into the caller)", async () => {
    const src = new InMemoryServiceCIDRs();
    src.subscribe({
      onAdd: () => {
        throw new Error('late');
      },
      onDelete: () => {},
    });
    const seen = new Promise<unknown>((resolve) => {
      const original = globalThis.queueMicrotask;
      globalThis.queueMicrotask = (fn) => {
        globalThis.queueMicrotask = original;
        try {
          fn();
        } catch (e) {
          resolve(e);
        }
      };
    });
    expect(() => src.addServiceCIDR('x', ['10.0.0.0/24'])).not.toThrow();
    expect(((await seen) as Error).message).toBe('late');
  });
  it.each([-1, 0, 'x'])('onWatcherError must be a function (%j → InvalidArgumentError)', (h) => {
    expect(() => new InMemoryServiceCIDRs({ onWatcherError: h as never })).toThrow(InvalidArgumentError);
  });
});
