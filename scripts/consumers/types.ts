// TypeScript: the public types as an app sees them, checked under node16, nodenext and bundler,
// with TypeScript 5.0 and the current one, and once with lib ES2022 alone (no DOM, no
// @types/node, skipLibCheck off): the declarations must not need either. With prom-client
// installed, as here, its registries go where the API takes one (types-no-prom-client.ts: without).
import {
  Allocator,
  coolDown,
  ErrFull,
  IPAllocatorError,
  MemoryStore,
  Range,
  seededRandom,
  type DualStackIPs,
  type IPAllocator,
  type IPAddressRecord,
  type Store,
  type MetaAllocatorOptions,
  type ParentRef,
  type RangeSnapshot,
} from 'ipallocator';
import { canonicalAddr, hostsPerNetwork, type Family } from 'ipallocator/core';
import { registerMetrics, type AllocatorMetrics } from 'ipallocator/metrics';
import { Registry, type OpenMetricsContentType } from 'prom-client';

const owner: ParentRef = { group: '', resource: 'services', namespace: 'default', name: 'web' };

export async function allocateOne(cidr: string): Promise<string> {
  const registry = new Registry();
  const alloc: IPAllocator = Allocator.create(cidr, { store: new MemoryStore(), random: seededRandom(1), metrics: registry });
  try {
    const ip: string = await alloc.allocateNext(owner);
    const free: bigint = alloc.free();
    const used: number = alloc.used();
    return `${ip} ${free} ${used}`;
  } catch (e) {
    if (e instanceof ErrFull || (e instanceof IPAllocatorError && e.code === ErrFull.code)) return 'full';
    throw e;
  } finally {
    alloc.destroy();
  }
}

export function snapshotOf(cidr: string): RangeSnapshot {
  const range = new Range(cidr);
  range.allocate('10.0.0.1');
  const snap = range.snapshot();
  range.destroy();
  return snap;
}

export const family: Family = 4;
export const name: string = canonicalAddr('10.0.0.1');
export const size: bigint = hostsPerNetwork('10.0.0.0/24');
export const metrics: AllocatorMetrics = registerMetrics(new Registry());
export const metaOptions: MetaAllocatorOptions = { metrics: new Registry() };

export function rangeWithOpenMetrics(cidr: string): Range {
  const range = new Range(cidr);
  range.enableMetrics(new Registry<OpenMetricsContentType>());
  return range;
}
export type Record = IPAddressRecord;

// Configuration that may leave a value out: every optional key also takes `undefined` (these
// tsconfigs turn exactOptionalPropertyTypes on, as a strict app may).
export function fromConfig(config: { store?: MemoryStore | undefined; namespace?: string | undefined; ms?: number | undefined }): string {
  const alloc = new Allocator('10.0.0.0/24', {
    store: config.store,
    random: undefined,
    metrics: undefined,
    index: undefined,
    strategy: undefined,
  });
  const ref: ParentRef = { group: undefined, resource: 'services', namespace: config.namespace, name: 'web' };
  const meta: MetaAllocatorOptions = { store: config.store, policy: undefined, onSkip: undefined };
  const range = new Range('10.1.0.0/24', { indexKind: undefined, strategy: coolDown('upstream', { ms: config.ms ?? 0, now: undefined }) });
  const store = new MemoryStore({ syncOps: undefined, timestamps: undefined });
  const record: IPAddressRecord = { name: '10.1.0.1', labels: {}, parentRef: null, uid: undefined, resourceVersion: undefined };
  const custom: Store = {
    create: (r) => store.create(r),
    delete: (name) => store.delete(name),
    get: (name) => store.get(name),
    close: () => store.close(),
    cache: store.cache,
    sync: config.store === undefined ? undefined : config.store.sync,
  };
  const pair: DualStackIPs = { IPv4: '10.0.0.1', IPv6: undefined, ips: ['10.0.0.1'], families: ['IPv4'] };
  const text = `${alloc.cidr} ${ref.name} ${String(meta.policy)} ${range.cidr} ${store.size} ${record.name} ${String(custom.sync)} ${pair.ips}`;
  alloc.destroy();
  range.destroy();
  return text;
}
