// Bad input over every public entry point (corpus: test/reliability/corpus.ts). Each row calls
// one entry point with one input and checks (1) the typed error — class, and a message quoting
// the input (InvalidAddressError / InvalidCIDRError quote it with quoteInput; ErrNotInRange quotes
// the canonical address, as upstream) — or, where upstream accepts the input, that the call is
// accepted (the row name says so); and (2) that the state is unchanged afterwards: used(),
// free(), forEach, the store records, Range.snapshot(), validate().
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Allocator,
  DualStackAllocator,
  ErrAllocated,
  ErrFull,
  ErrMismatchedNetwork,
  ErrNotInRange,
  InMemoryServiceCIDRs,
  InvalidAddressError,
  InvalidArgumentError,
  InvalidCIDRError,
  InvalidRangeError,
  MemoryStore,
  MetaAllocator,
  NotFoundError,
  Range,
  ReferenceAllocator,
  seededRandom,
} from '../../adapters/index.ts';
import { canonicalAddr, parseAddr, parsePrefix } from '../../adapters/core.ts';
import { quoteInput, quoteText } from '../../adapters/quote.ts';
import { validateServiceCIDRSpec } from '../../adapters/service-cidrs.ts';
import { KubernetesStore } from '../../adapters/kubernetes/index.ts';
import type { IPAllocator } from '../../adapters/types.ts';
import { ApiServerDouble } from '../k8s/apiserver-double.ts';
import { kubeConfigFor } from '../k8s/kubeconfig.ts';
import { BAD_ADDRESSES, BAD_CALLBACKS, BAD_CIDRS, BAD_COUNTS, IPV4_MAPPED_MESSAGE, UNSERVABLE_CIDRS } from './corpus.ts';

const V4 = '10.1.2.0/24';
const V6 = 'fd00:1::/120';
const OWNER = { group: '', resource: 'services', namespace: 'ns', name: 'svc' };

// ── the fixture: every entry point over non-trivial state ───────────────────────────────────

const store = new MemoryStore();
const metaStore = new MemoryStore();
const alloc4 = new Allocator(V4, { store, random: seededRandom(1) });
const alloc6 = new Allocator(V6, { store, random: seededRandom(2) });
const ref4 = new ReferenceAllocator(V4, { store, random: seededRandom(3) });
const range4 = new Range(V4, { random: seededRandom(4) });
const range6 = new Range(V6, { random: seededRandom(5) });
const cidrs = new InMemoryServiceCIDRs();
cidrs.addServiceCIDR('kubernetes', [V4, V6]);
const meta = new MetaAllocator('IPv4', cidrs, { store: metaStore, random: seededRandom(6) });
const dual = new DualStackAllocator(alloc4, alloc6);

let checks = 0;
const inputs = new Set<unknown>();

beforeAll(async () => {
  await alloc4.allocate('10.1.2.5', OWNER);
  await alloc4.allocateNext(OWNER);
  await alloc6.allocate('fd00:1::5', OWNER);
  await alloc6.allocateNext(OWNER);
  await meta.allocate('10.1.2.7', OWNER);
  range4.allocate('10.1.2.5');
  range4.allocateMany(20);
  range6.allocate('fd00:1::ff');
  range6.allocateMany(5);
});

afterAll(() => {
  console.log(`[reliability] bad input: ${inputs.size} distinct inputs, ${checks} entry-point checks, state unchanged after each`);
});

function list(a: { forEach(fn: (ip: string) => void): void }): string[] {
  const out: string[] = [];
  a.forEach((ip) => out.push(ip));
  return out.sort();
}

function hex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

/** Everything observable, as one comparable value; validate() runs on the way. */
function state(): unknown {
  for (const a of [alloc4, alloc6]) {
    a.validate();
  }
  range4.validate();
  range6.validate();
  const records = (s: MemoryStore) =>
    s
      .records()
      .map((r) => `${r.name} ${JSON.stringify(r.labels)} ${JSON.stringify(r.parentRef)}`)
      .sort();
  const allocs: IPAllocator[] = [alloc4, alloc6, ref4, meta];
  return {
    allocators: allocs.map((a) => [a.used(), String(a.free()), list(a)]),
    ranges: [range4, range6].map((r) => [r.used(), String(r.free()), list(r), hex(r.snapshot().data)]),
    store: records(store),
    metaStore: records(metaStore),
  };
}

type Expect = { error: new (...args: never[]) => Error; quotes?: string } | { ok: true; value?: unknown };

/** Runs `call`, checks the outcome and that the state did not change. */
async function check(input: unknown, call: () => unknown, want: Expect, restore?: () => Promise<void> | void): Promise<void> {
  inputs.add(input);
  checks++;
  const before = state();
  let result: unknown;
  let thrown: unknown;
  try {
    result = await call();
  } catch (e) {
    thrown = e;
  }
  if ('error' in want) {
    expect(
      thrown,
      `expected ${want.error.name}, got ${thrown === undefined ? `a result ${String(result)}` : String(thrown)}`,
    ).toBeInstanceOf(want.error);
    const quote = want.quotes ?? quoteInput(input);
    expect((thrown as Error).message).toContain(quote);
  } else {
    if (thrown !== undefined) throw thrown;
    if ('value' in want) expect(result).toEqual(want.value);
  }
  if (restore) await restore();
  expect(state()).toEqual(before);
}

const IAE = { error: InvalidAddressError };

// ── 1. malformed and ambiguous address text, non-strings ────────────────────────────────────

describe('bad address text and non-strings, every entry point', () => {
  describe.each(BAD_ADDRESSES.map(([label, v]) => [label, v] as const))('%s', (_label, input) => {
    const x = input as string;
    it('Allocator / ReferenceAllocator.allocate → InvalidAddressError quoting the input', async () => {
      await check(input, () => alloc4.allocate(x), IAE);
      await check(input, () => alloc6.allocate(x), IAE);
      await check(input, () => ref4.allocate(x), IAE);
      await check(input, () => alloc4.dryRun().allocate(x), IAE);
    });
    it('Allocator / ReferenceAllocator.release / has → InvalidAddressError before any store call', async () => {
      await check(input, () => alloc4.release(x), IAE);
      await check(input, () => ref4.release(x), IAE);
      await check(input, () => alloc6.has(x), IAE);
      await check(input, () => ref4.has(x), IAE);
    });
    it('Range.allocate / release / has / dryRun → InvalidAddressError', async () => {
      await check(input, () => range4.allocate(x), IAE);
      await check(input, () => range6.release(x), IAE);
      await check(input, () => range4.has(x), IAE);
      await check(input, () => range4.dryRun().allocate(x), IAE);
      await check(input, () => range4.releaseMany(['10.1.2.5', x]), IAE);
      await check(input, () => range4.loadMany(['10.1.2.9', x]), IAE);
    });
    it('MetaAllocator.allocate / release / has → InvalidAddressError', async () => {
      await check(input, () => meta.allocate(x), IAE);
      await check(input, () => meta.release(x), IAE);
      await check(input, () => meta.has(x), IAE);
    });
    it('DualStackAllocator.allocate / release, parseAddr, canonicalAddr → InvalidAddressError', async () => {
      await check(input, () => dual.allocate([x]), IAE);
      await check(input, () => dual.allocate(['10.1.2.9', x]), IAE);
      await check(input, () => dual.release([x]), IAE);
      await check(input, () => parseAddr(x), IAE);
      await check(input, () => canonicalAddr(x), IAE);
    });
  });
});

// ── 2. well-formed but not allocatable: wrong family, network, broadcast, mapped, outside ──

describe('wrong family, network and broadcast addresses, IPv4-mapped IPv6', () => {
  const notInRange = (ip: string, cidr: string) => ({
    error: ErrNotInRange,
    quotes: `the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${cidr}`,
  });
  const rows: [string, IPAllocator | Range, string, Expect][] = [
    ['IPv4 network address', alloc4, '10.1.2.0', notInRange('10.1.2.0', V4)],
    ['IPv4 broadcast address', alloc4, '10.1.2.255', notInRange('10.1.2.255', V4)],
    ['IPv4 outside the prefix', alloc4, '10.1.3.1', notInRange('10.1.3.1', V4)],
    ['IPv6 address on an IPv4 range', alloc4, 'fd00:1::5', notInRange('fd00:1::5', V4)],
    ['IPv4-mapped IPv6 outside the IPv4 range (quoted as IPv4)', alloc4, '::ffff:10.1.3.5', notInRange('10.1.3.5', V4)],
    ['IPv6 network address', alloc6, 'fd00:1::', notInRange('fd00:1::', V6)],
    ['IPv6 one past the prefix', alloc6, 'fd00:1::100', notInRange('fd00:1::100', V6)],
    ['IPv4 address on an IPv6 range', alloc6, '10.1.2.5', notInRange('10.1.2.5', V6)],
    ['IPv4-mapped IPv6 on an IPv6 range is IPv4', alloc6, '::ffff:10.1.2.5', notInRange('10.1.2.5', V6)],
    ['non-canonical IPv6 outside (quoted canonical)', alloc6, 'FD00:0001:0000::0100', notInRange('fd00:1::100', V6)],
    ['ReferenceAllocator: IPv4 broadcast', ref4, '10.1.2.255', notInRange('10.1.2.255', V4)],
    ['Range: IPv4 network address', range4, '10.1.2.0', notInRange('10.1.2.0', V4)],
    ['Range: IPv4 broadcast', range4, '10.1.2.255', notInRange('10.1.2.255', V4)],
    ['Range: IPv6 on an IPv4 range', range4, '::1', notInRange('::1', V4)],
    ['Range: IPv6 network address', range6, 'fd00:1::', notInRange('fd00:1::', V6)],
    ['already allocated', alloc4, '10.1.2.5', { error: ErrAllocated, quotes: 'provided IP is already allocated' }],
    ['already allocated (Range)', range4, '10.1.2.5', { error: ErrAllocated, quotes: 'provided IP is already allocated' }],
    [
      'already allocated, IPv4-mapped spelling',
      alloc4,
      '::ffff:10.1.2.5',
      { error: ErrAllocated, quotes: 'provided IP is already allocated' },
    ],
  ];
  it.each(rows.map(([label, a, ip, w]) => [label, a, ip, w] as const))('%s → typed error, state unchanged', async (_l, a, ip, w) => {
    await check(ip, () => a.allocate(ip), w);
  });

  it('MetaAllocator: the network address of its only range → ErrMismatchedNetwork (upstream PrefixContainsIP)', async () => {
    await check('10.1.2.0', () => meta.allocate('10.1.2.0'), {
      error: ErrMismatchedNetwork,
      quotes: 'the provided network does not match the current range',
    });
    await check('fd00:1::5', () => meta.allocate('fd00:1::5'), { error: ErrMismatchedNetwork, quotes: 'does not match' });
  });
  it('MetaAllocator.release outside every range → ErrMismatchedNetwork (upstream returns it from Release)', async () => {
    await check('10.9.9.9', () => meta.release('10.9.9.9'), { error: ErrMismatchedNetwork, quotes: 'does not match' });
  });
  it('release of an out-of-range or wrong-family address is a no-op (accepted, as upstream)', async () => {
    for (const ip of ['10.1.3.1', '10.1.2.0', '10.1.2.255', 'fd00:1::77', '::ffff:10.1.3.5']) {
      await check(ip, () => alloc4.release(ip), { ok: true });
      await check(ip, () => ref4.release(ip), { ok: true });
      await check(ip, () => range4.release(ip), { ok: true });
    }
  });
  it('release/has of the other family never touch its record, whatever the spelling (IPv4-mapped included)', async () => {
    // The fixture holds 10.1.2.5 (alloc4) and fd00:1::5 (alloc6) on one store. Upstream's Release
    // deletes by name with no range check; here an allocator never has an effect on the other family.
    const v6 = new ReferenceAllocator(V6, { store, random: seededRandom(7) });
    const cases: [IPAllocator, string, string][] = [
      [alloc4, 'fd00:1::5', 'fd00:1::5'],
      [ref4, 'fd00:1::5', 'fd00:1::5'],
      [alloc6, '10.1.2.5', '10.1.2.5'],
      [alloc6, '::ffff:10.1.2.5', '10.1.2.5'],
      [alloc6, '::ffff:a01:205', '10.1.2.5'],
      [v6, '::FFFF:10.1.2.5', '10.1.2.5'],
    ];
    for (const [a, text, name] of cases) {
      inputs.add(`${text} via ${a.ipFamily}`);
      checks++;
      expect(await a.has(text), `${a.ipFamily} has(${text})`).toBe(false);
      await a.release(text);
      expect(
        store.records().some((r) => r.name === name),
        `${a.ipFamily} release(${text}) kept ${name}`,
      ).toBe(true);
    }
    v6.destroy();
  });
  it('IPv4-mapped spelling of a free in-range address is accepted as the IPv4 address (upstream net.IP)', async () => {
    for (const a of [alloc4, ref4]) {
      await check(
        '::ffff:10.1.2.77',
        () => a.allocate('::ffff:10.1.2.77'),
        { ok: true },
        async () => {
          expect(store.records().some((r) => r.name === '10.1.2.77')).toBe(true);
          await a.release('10.1.2.77');
        },
      );
    }
    await check(
      '::ffff:10.1.2.77',
      () => range4.allocate('::ffff:10.1.2.77'),
      { ok: true },
      () => {
        expect(range4.has('10.1.2.77')).toBe(true);
        range4.release('10.1.2.77');
      },
    );
  });
  it('IPv6 all-ones is allocatable (no broadcast in IPv6, upstream)', async () => {
    await check(
      'fd00:1::ff',
      () => alloc6.allocate('fd00:1::ff'),
      { ok: true },
      () => alloc6.release('fd00:1::ff'),
    );
  });
  it('DualStackAllocator: two addresses of one family, none, too many, not an array → InvalidArgumentError', async () => {
    const quotes = { error: InvalidArgumentError, quotes: '' };
    for (const ips of [['10.1.2.9', '10.1.2.10'], [], ['10.1.2.9', 'fd00:1::9', '10.1.2.10'], null, '10.1.2.9', { ips: [] }]) {
      await check(ips, () => dual.allocate(ips as string[]), quotes);
    }
    for (const fams of [['IPv4', 'IPv4'], ['IPv5'], [], null, 'IPv4']) {
      await check(fams, () => dual.allocateNext(undefined, fams as never), { error: InvalidArgumentError, quotes: '' });
    }
  });
  it('DualStackAllocator: a later family failing rolls the earlier one back (state unchanged)', async () => {
    await check('10.1.2.9+fd00:1::', () => dual.allocate(['10.1.2.9', 'fd00:1::']), notInRange('fd00:1::', V6));
  });
});

// ── 3. constructors ────────────────────────────────────────────────────────────────────────

describe('constructors and prefix parsing', () => {
  it.each(BAD_CIDRS.map(([l, v]) => [l, v] as const))('malformed CIDR %s → InvalidCIDRError quoting it, everywhere', async (_l, input) => {
    const x = input as string;
    const q = { error: InvalidCIDRError };
    await check(input, () => new Allocator(x, { store }), q);
    await check(input, () => new ReferenceAllocator(x, { store }), q);
    await check(input, () => new Range(x), q);
    await check(input, () => parsePrefix(x), q);
    // (only an object with a `range` field, the whole snapshot given as its range text, gets
    // InvalidArgumentError naming the calls to make: test/range.test.ts)
    await check(input, () => range4.restore(x, new Uint8Array()), q);
  });
  it.each(UNSERVABLE_CIDRS.map(([l, c, m, r]) => [l, c, m, r] as const))(
    '%s: allocators → InvalidRangeError; Range: as its row says',
    async (_l, cidr, message, range) => {
      const q = { error: InvalidRangeError, quotes: message };
      await check(cidr, () => new Allocator(cidr, { store }), q);
      await check(cidr, () => new ReferenceAllocator(cidr, { store }), q);
      if (range === 'range-accepts') {
        await check(cidr, () => new Range(cidr).destroy(), { ok: true });
      } else {
        await check(cidr, () => new Range(cidr), { error: InvalidRangeError, quotes: IPV4_MAPPED_MESSAGE });
      }
    },
  );
  // The API server's validation (ValidateServiceCIDR) takes a prefix over the IPv4-mapped block,
  // refusing only one whose address is IPv4-mapped; the allocators here refuse its range.
  it('ServiceCIDRs over the IPv4-mapped block are taken by validation, as the API server takes them, and skipped by a MetaAllocator', async () => {
    const src = new InMemoryServiceCIDRs();
    const cidrs = ['::/64', '::fffe:0:0/95', '::/80'];
    for (const cidr of cidrs) {
      await check(cidr, () => src.addServiceCIDR(`mapped-${cidrs.indexOf(cidr)}`, [cidr]), { ok: true });
      await check(cidr, () => validateServiceCIDRSpec(['10.0.0.0/24', cidr]), { ok: true });
    }
    await check('::ffff:10.0.0.0/104', () => validateServiceCIDRSpec(['::ffff:10.0.0.0/104']), { error: InvalidCIDRError });
    const skipped: string[] = [];
    const reasons: string[] = [];
    await check(
      cidrs,
      () => {
        const m = new MetaAllocator('IPv6', src, {
          store: metaStore,
          onSkip: (s) => {
            skipped.push(s.cidr);
            reasons.push(s.reason.message);
          },
        });
        m.destroy();
      },
      { ok: true },
    );
    expect(skipped).toEqual(cidrs);
    for (const reason of reasons) expect(reason).toContain(IPV4_MAPPED_MESSAGE);
  });
  it('MetaAllocator: bad family and policy → InvalidArgumentError; unservable CIDRs are skipped, not thrown', async () => {
    for (const fam of ['ipv4', 'IPv5', null, 4]) {
      await check(fam, () => new MetaAllocator(fam as never, cidrs, { store: metaStore }), {
        error: InvalidArgumentError,
        quotes: String(fam),
      });
    }
    await check('policy', () => new MetaAllocator('IPv4', cidrs, { store: metaStore, policy: 'random' as never }), {
      error: InvalidArgumentError,
      quotes: 'random',
    });
    const src = new InMemoryServiceCIDRs();
    src.addServiceCIDR('wide', ['2001:db8::/48']);
    const skipped: string[] = [];
    await check(
      '2001:db8::/48',
      () => {
        const m = new MetaAllocator('IPv6', src, { store: metaStore, onSkip: (s) => skipped.push(s.cidr) });
        m.destroy();
      },
      { ok: true },
    );
    expect(skipped).toEqual(['2001:db8::/48']);
  });
  it('DualStackAllocator: allocators of the wrong family or missing → InvalidArgumentError', async () => {
    for (const [a, b] of [
      [alloc6, alloc4],
      [null, alloc6],
      [alloc4, undefined],
    ]) {
      await check('pair', () => new DualStackAllocator(a as never, b as never), { error: InvalidArgumentError, quotes: 'must be' });
    }
    // one allocator for both families is that mistake, said as such
    await check('pair', () => new DualStackAllocator(alloc4, alloc4), { error: InvalidArgumentError, quotes: 'the same allocator' });
  });
});

// ── 4. counts and callbacks ────────────────────────────────────────────────────────────────

describe('allocateMany counts, forEach callbacks', () => {
  it.each(BAD_COUNTS.map(([l, v, w]) => [l, v, w] as const))('allocateMany(%s)', async (_l, input, want) => {
    for (const r of [range4, range6]) {
      const n = input === 'free+1' ? Number(r.free()) + 1 : input;
      if (want === 'ok') {
        await check(input, () => r.allocateMany(n as number), { ok: true, value: [] });
        continue;
      }
      const w = want === 'ErrFull' ? { error: ErrFull, quotes: 'range is full' } : { error: InvalidArgumentError, quotes: quoteInput(n) };
      await check(input, () => r.allocateMany(n as number), w);
    }
  });
  it.each(BAD_CALLBACKS.map(([l, v]) => [l, v] as const))('forEach(%s) → InvalidArgumentError everywhere', async (_l, fn) => {
    const w = { error: InvalidArgumentError, quotes: 'forEach needs a function' };
    for (const a of [alloc4, ref4, meta, range4, alloc4.dryRun(), range4.dryRun()]) {
      await check(fn, () => a.forEach(fn as never), w);
    }
  });
  it('a callback that throws: the error reaches the caller unchanged, state unchanged', async () => {
    const boom = new Error('callback failed');
    for (const a of [alloc4, ref4, meta, range4]) {
      inputs.add('throwing callback');
      checks++;
      const before = state();
      expect(() =>
        a.forEach(() => {
          throw boom;
        }),
      ).toThrow(boom);
      expect(state()).toEqual(before);
    }
  });
  it('a Range.forEach callback releasing and re-allocating what it visits: each address seen once, state restored', async () => {
    const seen: string[] = [];
    await check(
      'reentrant callback',
      () => {
        range4.forEach((ip) => {
          seen.push(ip);
          range4.release(ip);
          range4.allocate(ip);
        });
      },
      { ok: true },
    );
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(range4.used());
  });
  it('Range.restore with data that is not a Uint8Array, or sets bits outside the range → InvalidArgumentError, unchanged', async () => {
    for (const data of [null, 'abc', [1, 2], new Uint8Array(64).fill(255)]) {
      await check(data, () => range4.restore(V4, data as never), { error: InvalidArgumentError, quotes: '' });
    }
    await check('10.1.3.0/24', () => range4.restore('10.1.3.0/24', new Uint8Array()), {
      error: ErrMismatchedNetwork,
      quotes: 'does not match',
    });
  });
});

// ── 5. store names ─────────────────────────────────────────────────────────────────────────

const BAD_NAMES: readonly (readonly [string, string])[] = [
  ['malformed', 'invalid-ip-address'],
  ['non-canonical IPv4', '010.1.2.5'],
  ['non-canonical IPv6', 'fd00:1:0:0::5'],
  ['slash', '10.1.2.0/24'],
  ['path traversal', '../servicecidrs/kubernetes'],
  ['dot-dot', '..'],
  ['dot', '.'],
  ['empty', ''],
  ['percent-encoded slash', '10.1.2.5%2F..'],
  ['query string', '10.1.2.5?watch=true'],
  ['space', '10.1.2.5 '],
  ['NUL', '10.1.2.5\u0000'],
  ['unicode', 'адрес'],
  ['10 kB', 'x'.repeat(10_240)],
];

describe('store names: get → undefined, delete → NotFoundError quoting the name, nothing changes', () => {
  it.each(BAD_NAMES.map(([l, n]) => [l, n] as const))('MemoryStore %s', async (_l, name) => {
    await check(name, () => store.get(name), { ok: true, value: undefined });
    // quoted as upstream's %q: what a reader could not see escaped (a NUL as \u0000)
    await check(name, () => store.delete(name), { error: NotFoundError, quotes: quoteText(name.slice(0, 64)).slice(1, -1) });
  });

  describe('KubernetesStore through the API-server double', () => {
    let d: ApiServerDouble;
    let ks: KubernetesStore;
    beforeAll(async () => {
      d = await ApiServerDouble.start({ requireParentRef: false });
      d.insert({ metadata: { name: '10.1.2.5', labels: {} }, spec: { parentRef: { resource: 'services', namespace: 'ns', name: 'svc' } } });
      ks = new KubernetesStore(kubeConfigFor(d.url), { backoff: { initialMs: 2, maxMs: 20 } });
      await ks.waitForSync();
    });
    afterAll(async () => {
      ks.close();
      await d.close();
    });
    const serverState = () => [
      d
        .objects()
        .map((o) => o.metadata.name)
        .sort(),
      d
        .objects('servicecidrs')
        .map((o) => o.metadata.name)
        .sort(),
    ];
    it.each(BAD_NAMES.filter(([, n]) => n.length < 1000).map(([l, n]) => [l, n] as const))('%s', async (_l, name) => {
      d.insert({ metadata: { name: 'kubernetes' }, spec: { cidrs: [V4] } }, 'servicecidrs');
      const before = serverState();
      inputs.add(name);
      checks += 2;
      expect(await ks.get(name)).toBeUndefined();
      const e = await ks.delete(name).then(
        () => null,
        (x: unknown) => x,
      );
      expect(e, `delete(${JSON.stringify(name)})`).toBeInstanceOf(Error);
      expect(e).toBeInstanceOf(NotFoundError);
      expect((e as Error).message).toContain(quoteText(name.slice(0, 20)).slice(1, -1));
      expect(serverState()).toEqual(before);
    });
  });
});
