// The entry point `ipallocator/metrics`: the metrics API with prom-client imported statically.
//
// The package root never imports prom-client (an optional peer dependency): the first allocator
// that enables metrics loads the app's copy on the spot through the CommonJS loader of Node and
// Deno. Import this entry instead where that loader is missing or a static import graph is
// wanted — a bundle, Deno through JSR — or to read the metric objects themselves:
//
//   import { registerMetrics } from 'ipallocator/metrics';
//   const { allocated } = registerMetrics(registry);   // prom-client Gauge<'cidr'>
import * as promClient from 'prom-client';
import { usePromClient } from './metrics.ts';

// prom-client is CommonJS: its exports arrive as named exports and, in Node, on `default` too.
usePromClient(promClient);

export {
  DEF_BUCKETS,
  METRIC_ALLOCATED_IPS,
  METRIC_ALLOCATIONS,
  METRIC_AVAILABLE_IPS,
  METRIC_DURATION,
  METRIC_ERRORS,
  registerMetrics,
} from './metrics.ts';
export type { AllocatorMetrics, Scope } from './metrics.ts';
