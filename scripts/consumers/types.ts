// TypeScript: the public types as an app sees them, checked under node16, nodenext and bundler,
// with TypeScript 5.0 and the current one, and once with lib ES2022 alone (no DOM, no
// @types/node, skipLibCheck off): the declarations must not need either. With prom-client
// installed, as here, its registries go where the API takes one (types-no-prom-client.ts: without).
import {
  Allocator,
  ErrFull,
  IPAllocatorError,
  MemoryStore,
  Range,
  seededRandom,
  type IPAllocator,
  type IPAddressRecord,
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
