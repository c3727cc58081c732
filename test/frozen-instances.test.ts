// An instance a user freezes (Object.freeze) keeps working: every class keeps what changes in
// objects of its own (a state object, the index), not in fields of the instance, and builds
// nothing on it later. For each class an entry point exports, every public method and getter is
// called on a frozen instance: none may fail with the TypeError of a write to a frozen object,
// and the instance answers as one never frozen would.
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  Allocator,
  DualStackAllocator,
  ErrFull,
  InMemoryServiceCIDRs,
  MemoryStore,
  MetaAllocator,
  Range,
  ReferenceAllocator,
  coolDown,
} from '../adapters/index.ts';
import { seededRandom } from '../adapters/core.ts';
import type { Cooling } from '../adapters/cooling.ts';
import * as entry from '../adapters/index.ts';
import * as kubernetes from '../adapters/kubernetes/index.ts';
import { KubernetesServiceCIDRs, KubernetesStore } from '../adapters/kubernetes/index.ts';
import { kubeConfigFor } from './k8s/kubeconfig.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const ENTRIES = ['adapters/index.ts', 'adapters/core.ts', 'adapters/prometheus.ts', 'adapters/kubernetes/index.ts'];

/**
 * Each class the entry points export (as a value or a type) with methods, and its public members
 * as a user's declarations show them: `name` for a method, `get name` for a getter, inherited ones
 * included, those left out of the .d.ts (@internal), private and protected ones not.
 */
function publicMembers(): Map<string, string[]> {
  const config = ts.getParsedCommandLineOfConfigFile(
    `${root}tsconfig.json`,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  )!;
  const program = ts.createProgram(
    ENTRIES.map((entry) => `${root}${entry}`),
    config.options,
  );
  const checker = program.getTypeChecker();
  const classes = new Map<string, string[]>();
  for (const entry of ENTRIES) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(`${root}${entry}`)!)!;
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (!(symbol.flags & ts.SymbolFlags.Class)) continue;
      const members: string[] = [];
      for (const member of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol))) {
        const declaration = member.valueDeclaration ?? member.declarations?.[0];
        if (declaration === undefined || !(ts.isMethodDeclaration(declaration) || ts.isGetAccessorDeclaration(declaration))) continue;
        if (!ts.isIdentifier(declaration.name)) continue;
        if (ts.getCombinedModifierFlags(declaration) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
        if (ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === 'internal')) continue;
        members.push(`${ts.isGetAccessorDeclaration(declaration) ? 'get ' : ''}${member.name}`);
      }
      if (members.length > 0) classes.set(symbol.name, members.sort());
    }
  }
  return classes;
}

const OWNER = { group: '', resource: 'services', namespace: 'ns', name: 'svc' };
const RECORD = { name: '10.0.0.5', labels: {}, parentRef: null };
const WATCHER = { onAdd() {}, onDelete() {} };
/** A cluster nothing answers at: the Kubernetes classes are made with `start: false`. */
const unreachable = () => kubeConfigFor('http://127.0.0.1:9');

type Calls<T> = Record<string, (o: T) => unknown>;

/** The calls of the IPAllocator members, on an allocator over 10.0.0.0/24 that holds 10.0.0.1. */
const ALLOCATOR_CALLS: Calls<Allocator | ReferenceAllocator | MetaAllocator> = {
  'get size': (o) => o.size,
  allocate: (o) => o.allocate('10.0.0.9', OWNER),
  allocateNext: (o) => o.allocateNext(OWNER),
  release: (o) => o.release('10.0.0.1'),
  has: (o) => o.has('10.0.0.9'),
  forEach: (o) => o.forEach(() => {}),
  used: (o) => o.used(),
  free: (o) => o.free(),
  dryRun: (o) => o.dryRun(),
  enableMetrics: (o) => o.enableMetrics(),
  destroy: (o) => o.destroy(),
};

/** The Cooling a coolDown chooser shows a strategy, from a Range of its own (destroyed: what it holds stays readable). */
function cooling(): Cooling {
  let seen: Cooling | undefined;
  const range = new Range('10.0.0.0/29', {
    strategy: {
      name: 'seeing',
      forRange(view) {
        const chooser = coolDown('lowest-free', { allocations: 1 }).forRange(view);
        seen = chooser.cooling;
        return chooser;
      },
    },
  });
  range.destroy();
  return seen!;
}

/** [class, how to make one (given a store to share), its members' calls, in order: destroy or close last] */
const ROWS: [string, (store: MemoryStore) => Promise<object> | object, Calls<never>][] = [
  [
    'Allocator',
    async (store) => {
      const a = new Allocator('10.0.0.0/24', { store, random: seededRandom(1) });
      await a.allocate('10.0.0.1');
      return a;
    },
    {
      setReady: (o: Allocator) => o.setReady(true),
      isReady: (o: Allocator) => o.isReady(),
      'get canAllocateNow': (o: Allocator) => o.canAllocateNow,
      tryAllocateNextNow: (o: Allocator) => o.tryAllocateNextNow(OWNER),
      validate: (o: Allocator) => o.validate(),
      ...ALLOCATOR_CALLS,
    },
  ],
  [
    'ReferenceAllocator',
    async (store) => {
      const a = new ReferenceAllocator('10.0.0.0/24', { store, random: seededRandom(2) });
      await a.allocate('10.0.0.1');
      return a;
    },
    { setReady: (o: ReferenceAllocator) => o.setReady(true), isReady: (o: ReferenceAllocator) => o.isReady(), ...ALLOCATOR_CALLS },
  ],
  [
    'MetaAllocator',
    async (store) => {
      const source = new InMemoryServiceCIDRs();
      source.addServiceCIDR('one', ['10.0.0.0/24']);
      const meta = new MetaAllocator('IPv4', source, { store, random: seededRandom(3) });
      await meta.allocate('10.0.0.1');
      return meta;
    },
    {
      rangeFor: (o: MetaAllocator) => o.rangeFor('10.0.0.1'),
      ranges: (o: MetaAllocator) => o.ranges(),
      skipped: (o: MetaAllocator) => o.skipped(),
      ...ALLOCATOR_CALLS,
    },
  ],
  [
    'DryRunAllocator',
    async (store) => {
      const a = new Allocator('10.0.0.0/24', { store, random: seededRandom(4) });
      await a.allocate('10.0.0.1');
      return a.dryRun();
    },
    {
      'get cidr': (o: ReturnType<Allocator['dryRun']>) => o.cidr,
      'get ipFamily': (o: ReturnType<Allocator['dryRun']>) => o.ipFamily,
      'get canAllocateNow': (o: ReturnType<Allocator['dryRun']>) => o.canAllocateNow,
      tryAllocateNextNow: (o: ReturnType<Allocator['dryRun']>) => o.tryAllocateNextNow(OWNER),
      ...ALLOCATOR_CALLS,
    },
  ],
  [
    'DualStackAllocator',
    (store) =>
      new DualStackAllocator(
        new Allocator('10.0.0.0/24', { store, random: seededRandom(5) }),
        new Allocator('fd00::/120', { store, random: seededRandom(6) }),
      ),
    {
      allocator: (o: DualStackAllocator) => o.allocator('IPv4'),
      allocateNext: (o: DualStackAllocator) => o.allocateNext(OWNER),
      allocate: (o: DualStackAllocator) => o.allocate(['10.0.0.9', 'fd00::9'], OWNER),
      release: (o: DualStackAllocator) => o.release(['10.0.0.9', 'fd00::9']),
      destroy: (o: DualStackAllocator) => o.destroy(),
    },
  ],
  [
    'Range',
    () => {
      const r = new Range('10.0.0.0/24', { random: seededRandom(7) });
      r.allocate('10.0.0.1');
      return r;
    },
    {
      'get indexKind': (o: Range) => o.indexKind,
      allocate: (o: Range) => o.allocate('10.0.0.9'),
      allocateNext: (o: Range) => o.allocateNext(),
      tryAllocateNext: (o: Range) => o.tryAllocateNext(),
      release: (o: Range) => o.release('10.0.0.9'),
      has: (o: Range) => o.has('10.0.0.1'),
      forEach: (o: Range) => o.forEach(() => {}),
      used: (o: Range) => o.used(),
      free: (o: Range) => o.free(),
      allocateMany: (o: Range) => o.allocateMany(2),
      releaseMany: (o: Range) => o.releaseMany(['10.0.0.1']),
      loadMany: (o: Range) => o.loadMany(['10.0.0.1']),
      dryRun: (o: Range) => o.dryRun(),
      snapshot: (o: Range) => o.snapshot(),
      restore: (o: Range) => {
        const snap = o.snapshot();
        o.restore(snap.range, snap.data);
      },
      enableMetrics: (o: Range) => o.enableMetrics(),
      validate: (o: Range) => o.validate(),
      indexBytes: (o: Range) => o.indexBytes(),
      destroy: (o: Range) => o.destroy(),
    },
  ],
  ['Cooling', () => cooling(), { 'get size': (o: Cooling) => o.size, holds: (o: Cooling) => o.holds(0, 1) }],
  [
    'MemoryStore',
    () => new MemoryStore(),
    {
      create: (o: MemoryStore) => o.create(RECORD),
      get: (o: MemoryStore) => o.get('10.0.0.5'),
      delete: (o: MemoryStore) => o.delete('10.0.0.5'),
      createSync: (o: MemoryStore) => o.createSync(RECORD),
      getSync: (o: MemoryStore) => o.getSync('10.0.0.5'),
      deleteSync: (o: MemoryStore) => o.deleteSync('10.0.0.5'),
      'get watcherCount': (o: MemoryStore) => o.watcherCount,
      'get size': (o: MemoryStore) => o.size,
      'get sync': (o: MemoryStore) => o.sync,
      records: (o: MemoryStore) => o.records(),
      validate: (o: MemoryStore) => o.validate(),
      close: (o: MemoryStore) => o.close(),
    },
  ],
  [
    'InMemoryServiceCIDRs',
    () => new InMemoryServiceCIDRs(),
    {
      subscribe: (o: InMemoryServiceCIDRs) => o.subscribe(WATCHER)(),
      addServiceCIDR: (o: InMemoryServiceCIDRs) => o.addServiceCIDR('one', ['10.0.0.0/24']),
      setReady: (o: InMemoryServiceCIDRs) => o.setReady('one', true),
      get: (o: InMemoryServiceCIDRs) => o.get('one'),
      list: (o: InMemoryServiceCIDRs) => o.list(),
      hasSynced: (o: InMemoryServiceCIDRs) => o.hasSynced(),
      markDeleting: (o: InMemoryServiceCIDRs) => o.markDeleting('one'),
      deleteServiceCIDR: (o: InMemoryServiceCIDRs) => o.deleteServiceCIDR('one'),
    },
  ],
  ['Xoshiro128', () => seededRandom(1), { nextU32: (o: ReturnType<typeof seededRandom>) => o.nextU32() }],
  [
    'KubernetesStore',
    () => new KubernetesStore(unreachable(), { start: false }),
    {
      'get cache': (o: KubernetesStore) => o.cache.hasSynced(),
      'get state': (o: KubernetesStore) => o.state,
      'get stats': (o: KubernetesStore) => o.stats,
      'get lastError': (o: KubernetesStore) => o.lastError,
      onStateChange: (o: KubernetesStore) => o.onStateChange(() => {})(),
      // the requests reach no server: each answers its own error, not a frozen object's
      create: (o: KubernetesStore) => o.create(RECORD).catch(() => {}),
      get: (o: KubernetesStore) => o.get('10.0.0.5').catch(() => {}),
      delete: (o: KubernetesStore) => o.delete('10.0.0.5').catch(() => {}),
      start: (o: KubernetesStore) => o.start(),
      waitForSync: (o: KubernetesStore) => o.waitForSync({ timeoutMs: 1 }).catch(() => {}),
      close: (o: KubernetesStore) => o.close(),
    },
  ],
  [
    'KubernetesServiceCIDRs',
    () => new KubernetesServiceCIDRs(unreachable(), { start: false }),
    {
      subscribe: (o: KubernetesServiceCIDRs) => o.subscribe(WATCHER)(),
      hasSynced: (o: KubernetesServiceCIDRs) => o.hasSynced(),
      list: (o: KubernetesServiceCIDRs) => o.list(),
      get: (o: KubernetesServiceCIDRs) => o.get('kubernetes'),
      'get state': (o: KubernetesServiceCIDRs) => o.state,
      'get stats': (o: KubernetesServiceCIDRs) => o.stats,
      'get lastError': (o: KubernetesServiceCIDRs) => o.lastError,
      onStateChange: (o: KubernetesServiceCIDRs) => o.onStateChange(() => {})(),
      start: (o: KubernetesServiceCIDRs) => o.start(),
      waitForSync: (o: KubernetesServiceCIDRs) => o.waitForSync({ timeoutMs: 1 }).catch(() => {}),
      close: (o: KubernetesServiceCIDRs) => o.close(),
    },
  ],
  // each error class: toJSON is its one method. Made with the same arguments, enough for any of
  // their constructors (text first, an Error last): their values do not matter here
  ...Object.entries({ ...entry, ...kubernetes })
    .filter(([, v]) => v === entry.IPAllocatorError || (typeof v === 'function' && v.prototype instanceof entry.IPAllocatorError))
    .map(([name, type]): (typeof ROWS)[number] => [
      name,
      () => new (type as new (...args: unknown[]) => object)('x', 'IPv4', 1, new Error('last'), new Error('last')),
      { toJSON: (o: { toJSON(): unknown }) => o.toJSON() },
    ]),
  [
    'KubernetesApiError',
    () => new kubernetes.KubernetesApiError('get', 'ipaddresses', 'x', 500, { reason: 'InternalError' }, 'x', new Error('last')),
    { toJSON: (o: kubernetes.KubernetesApiError) => o.toJSON() },
  ],
];

describe('a frozen instance keeps working', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('the rows below cover every class an entry point exports, and every public method and getter of each', () => {
    const members = publicMembers();
    expect(Object.fromEntries(ROWS.map(([name, , calls]) => [name, Object.keys(calls).sort()]))).toEqual(Object.fromEntries(members));
  });

  it.each(ROWS)('%s: every public member, called on the frozen instance, answers as on one never frozen', async (_name, make, calls) => {
    const answers = async (frozen: boolean): Promise<unknown[]> => {
      // the same clock for both: a ServiceCIDR's creation and deletion times are part of the answers
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(new Date('2025-01-02T03:04:05.000Z'));
      const target = await make(new MemoryStore());
      if (frozen) Object.freeze(target);
      const got: unknown[] = [];
      for (const call of Object.values(calls) as ((o: object) => unknown)[]) {
        try {
          got.push(summary(await call(target)));
        } catch (e) {
          if (e instanceof TypeError) throw e; // a write to the frozen instance: the failure looked for
          got.push(e instanceof ErrFull ? 'ErrFull' : `${(e as Error).name}: ${(e as Error).message}`);
        }
      }
      if (frozen) expect(Object.isFrozen(target)).toBe(true);
      return got;
    };
    expect(await answers(true)).toEqual(await answers(false));
  });
});

/**
 * What a call answered, comparable between two instances (whose random sources are seeded alike):
 * a primitive, an array, a plain object and a typed array by value; an object of a class by its
 * class (a view, an error kept as lastError), whose answers its own row checks; a function by kind.
 */
function summary(answer: unknown): unknown {
  if (typeof answer === 'function') return 'function';
  if (answer === null || typeof answer !== 'object') return answer;
  if (Array.isArray(answer)) return answer.map(summary);
  if (ArrayBuffer.isView(answer)) return [...new Uint8Array(answer.buffer, answer.byteOffset, answer.byteLength)];
  const prototype = Object.getPrototypeOf(answer);
  if (prototype !== Object.prototype && prototype !== null) return `a ${prototype?.constructor?.name}`;
  return Object.fromEntries(Object.entries(answer).map(([key, value]) => [key, summary(value)]));
}
