// TypeScript without prom-client installed (an optional peer dependency, needed only for metrics):
// the package root and ipallocator/core must type-check without it, lib ES2022 alone and
// skipLibCheck off. `ipallocator/metrics` is left out: it imports prom-client itself.
import {
  Allocator,
  InMemoryServiceCIDRs,
  MemoryStore,
  MetaAllocator,
  Range,
  type AllocatorOptions,
  type IPAllocator,
  type MetaAllocatorOptions,
} from 'ipallocator';
import { canonicalAddr } from 'ipallocator/core';

export async function allocateOne(cidr: string): Promise<string> {
  const options: AllocatorOptions = { store: new MemoryStore(), metrics: false };
  const alloc: IPAllocator = Allocator.create(cidr, options);
  try {
    return await alloc.allocateNext();
  } finally {
    alloc.destroy();
  }
}

export function metaAllocator(cidr: string): MetaAllocator {
  const source = new InMemoryServiceCIDRs();
  source.addServiceCIDR('kubernetes', [cidr]);
  const options: MetaAllocatorOptions = { metrics: false };
  return new MetaAllocator('IPv4', source, options);
}

export function rangeWithDefaultMetrics(cidr: string): Range {
  const range = new Range(cidr);
  range.enableMetrics();
  return range;
}

// The metrics option is typed, not `any` (what an unresolved prom-client type turns into when
// skipLibCheck hides the error): a value that is no registry is refused.
// @ts-expect-error a number is neither a Registry nor a boolean
export const notARegistry: AllocatorOptions = { metrics: 42 };

export const name: string = canonicalAddr('10.0.0.1');
