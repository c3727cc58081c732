// console.log of a public object shows what a user asks it (its range, used, free, …) on one
// line, not the internals that hold it: a Range printed about 90 lines (the prefix's words, the
// index's handle, the strategy's tables). util.inspect is what console.log calls in Node; Deno's
// console calls the same method (Symbol.for('nodejs.util.inspect.custom')).
import { format, inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Allocator } from '../adapters/allocator.ts';
import { DualStackAllocator } from '../adapters/dual-stack.ts';
import { MemoryStore } from '../adapters/memory-store.ts';
import { MetaAllocator } from '../adapters/meta-allocator.ts';
import { Range } from '../adapters/range.ts';
import { ReferenceAllocator } from '../adapters/reference-allocator.ts';
import { InMemoryServiceCIDRs } from '../adapters/service-cidrs.ts';

const OWNER = { group: '', resource: 'services', namespace: 'ns', name: 'svc' };
const INSPECT = Symbol.for('nodejs.util.inspect.custom');

describe('console.log of each public object', () => {
  it('a Range: its CIDR, used and free; destroyed, its CIDR and that it is destroyed', () => {
    const r = new Range('10.0.0.0/16');
    r.allocateNext();
    r.allocateNext();
    r.allocateNext();
    expect(inspect(r)).toBe("Range { cidr: '10.0.0.0/16', used: 3, free: 65531n }");
    r.destroy();
    expect(inspect(r)).toBe("Range { cidr: '10.0.0.0/16', destroyed: true }");
  });

  it('an Allocator and a ReferenceAllocator: CIDR, used, free and ready; a MemoryStore: its records and watchers', async () => {
    const store = new MemoryStore();
    const a = new Allocator('10.1.0.0/24', { store });
    await a.allocateNext(OWNER);
    const ref = new ReferenceAllocator('10.4.0.0/24', { store });
    expect(inspect(a)).toBe("Allocator { cidr: '10.1.0.0/24', used: 1, free: 253n, ready: true }");
    expect(inspect(ref)).toBe("ReferenceAllocator { cidr: '10.4.0.0/24', used: 0, free: 254n, ready: true }");
    expect(inspect(store)).toBe('MemoryStore { size: 1, watcherCount: 2 }');
    a.destroy();
    ref.destroy();
    expect(inspect(a)).toBe("Allocator { cidr: '10.1.0.0/24', destroyed: true }");
    expect(inspect(ref)).toBe("ReferenceAllocator { cidr: '10.4.0.0/24', destroyed: true }");
    store.close();
    expect(inspect(store)).toBe('MemoryStore { closed: true }');
  });

  it('a MetaAllocator: its family, the CIDRs of its ranges and used; a DualStackAllocator: its two allocators', async () => {
    const store = new MemoryStore();
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('kubernetes', ['10.2.0.0/24']);
    const meta = new MetaAllocator('IPv4', cidrs, { store });
    await meta.allocateNext(OWNER);
    expect(inspect(meta)).toBe("MetaAllocator { ipFamily: 'IPv4', ranges: [ '10.2.0.0/24' ], used: 1 }");
    const pair = new DualStackAllocator(new Allocator('10.3.0.0/24', { store }), new Allocator('fd00::/120', { store }));
    expect(inspect(pair, { breakLength: Infinity })).toBe(
      "DualStackAllocator { ipv4: Allocator { cidr: '10.3.0.0/24', used: 0, free: 254n, ready: true }, ipv6: Allocator { cidr: 'fd00::/120', used: 0, free: 255n, ready: true } }",
    );
    meta.destroy();
    pair.destroy();
    expect(inspect(meta)).toBe("MetaAllocator { ipFamily: 'IPv4', destroyed: true }");
    expect(inspect(pair, { breakLength: Infinity })).toBe(
      "DualStackAllocator { ipv4: Allocator { cidr: '10.3.0.0/24', destroyed: true }, ipv6: Allocator { cidr: 'fd00::/120', destroyed: true } }",
    );
    store.close();
  });

  it('a dry-run view: the CIDR, used and free it answers, not the allocator it holds; destroyed with it', async () => {
    // Regression: it showed its internal field, `DryRunAllocator { real: Allocator { … } }`
    const store = new MemoryStore();
    const a = new Allocator('10.8.0.0/24', { store });
    await a.allocateNext(OWNER);
    const ref = new ReferenceAllocator('10.8.1.0/24', { store });
    const r = new Range('10.8.2.0/24');
    r.allocateNext();
    const views: [object, string, string][] = [
      [
        a.dryRun(),
        "DryRunAllocator { cidr: '10.8.0.0/24', used: 1, free: 253n }",
        "DryRunAllocator { cidr: '10.8.0.0/24', destroyed: true }",
      ],
      [
        ref.dryRun(),
        "DryRunAllocator { cidr: '10.8.1.0/24', used: 0, free: 254n }",
        "DryRunAllocator { cidr: '10.8.1.0/24', destroyed: true }",
      ],
      [r.dryRun(), "DryRunRange { cidr: '10.8.2.0/24', used: 1, free: 253n }", "DryRunRange { cidr: '10.8.2.0/24', destroyed: true }"],
    ];
    for (const [view, shown] of views) expect(inspect(view)).toBe(shown);
    a.destroy();
    ref.destroy();
    r.destroy();
    for (const [view, , destroyed] of views) expect(inspect(view)).toBe(destroyed);
    store.close();
  });

  it('the dry run of a MetaAllocator no range of which is ready: its family and used, not the MetaAllocator it holds', () => {
    // Regression: it showed its internal fields, `NotReadyDryRun { meta: MetaAllocator { … }, cidr: '' }`
    const store = new MemoryStore();
    const meta = new MetaAllocator('IPv6', new InMemoryServiceCIDRs(), { store });
    const view = meta.dryRun();
    // and under the name its type has (DryRunAllocator, as a ready MetaAllocator's dry run), not
    // that of the class behind it: it showed `NotReadyDryRun { … }`
    expect(inspect(view)).toBe("DryRunAllocator { ipFamily: 'IPv6', used: 0 }");
    meta.destroy();
    expect(inspect(view)).toBe("DryRunAllocator { ipFamily: 'IPv6', destroyed: true }");
    store.close();
  });

  it("a subclass shows under its own name; nested past inspect's depth, [Range]; called by hand, the same fields", () => {
    class MyRange extends Range {}
    const r = new MyRange('10.9.0.0/24');
    expect(inspect(r)).toBe("MyRange { cidr: '10.9.0.0/24', used: 0, free: 254n }");
    expect(inspect({ a: { b: r } }, { depth: 1 })).toBe('{ a: { b: [MyRange] } }');
    // without a runtime's inspect (a caller of the method itself): the fields written plainly
    const byHand = (r as unknown as Record<symbol, (depth: number) => string>)[INSPECT]!(2);
    expect(byHand).toBe("MyRange { cidr: '10.9.0.0/24', used: 0, free: 254n }");
    r.destroy();
  });

  it('at depth 0 (util.inspect(x, { depth: 0 }), console.log("%s", x)) its fields show, as a plain object\'s do there', async () => {
    const r = new Range('10.5.0.0/24');
    r.allocateNext();
    // the fields are the object's own level: a depth left of 0 shows them, and what is nested in
    // them as Node shows it at that depth ([Array], [Allocator])
    expect(inspect(r, { depth: 0 })).toBe("Range { cidr: '10.5.0.0/24', used: 1, free: 253n }");
    expect(format('%s', r)).toBe("Range { cidr: '10.5.0.0/24', used: 1, free: 253n }");
    const store = new MemoryStore();
    const pair = new DualStackAllocator(new Allocator('10.6.0.0/24', { store }), new Allocator('fd01::/120', { store }));
    expect(inspect(pair, { depth: 0 })).toBe('DualStackAllocator { ipv4: [Allocator], ipv6: [Allocator] }');
    // nested, the depth left where it is (not the whole depth less one), as for a plain object
    expect(inspect({ a: { b: pair } }, { breakLength: Infinity })).toBe(
      '{ a: { b: DualStackAllocator { ipv4: [Allocator], ipv6: [Allocator] } } }',
    );
    r.destroy();
    pair.destroy();
    store.close();
  });

  it("under a minifier that renames the classes (Range.name 'A'), each still shows its own name; a subclass its own", async () => {
    // what esbuild --minify, terser and the like do to a class's name in a bundle
    const store = new MemoryStore();
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('kubernetes', ['10.7.0.0/24']);
    const objects: [object, string, object][] = [
      [Range, 'Range', new Range('10.7.1.0/24')],
      [Allocator, 'Allocator', new Allocator('10.7.2.0/24', { store })],
      [ReferenceAllocator, 'ReferenceAllocator', new ReferenceAllocator('10.7.3.0/24', { store })],
      [MetaAllocator, 'MetaAllocator', new MetaAllocator('IPv4', cidrs, { store })],
      [
        DualStackAllocator,
        'DualStackAllocator',
        new DualStackAllocator(new Allocator('10.7.4.0/24', { store }), new Allocator('fd02::/120', { store })),
      ],
      [MemoryStore, 'MemoryStore', store],
    ];
    for (const [cls, name, object] of objects) {
      Object.defineProperty(cls, 'name', { value: 'A', configurable: true });
      try {
        expect(inspect(object).startsWith(`${name} {`), inspect(object)).toBe(true);
      } finally {
        Object.defineProperty(cls, 'name', { value: name, configurable: true });
      }
    }
    class MyRange extends Range {}
    expect(inspect(new MyRange('10.7.5.0/24'))).toBe("MyRange { cidr: '10.7.5.0/24', used: 0, free: 254n }");
    for (const [, , object] of objects) (object as { destroy?: () => void }).destroy?.();
    store.close();
  });
});
