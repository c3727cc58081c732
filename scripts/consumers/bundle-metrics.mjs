// Bundled by scripts/check-package.mjs (esbuild, prom-client inside the bundle) and run without
// node_modules: the README's `import 'ipallocator/metrics'` (imported for what it does, not for a
// name) must survive the bundler's tree-shaking, or enableMetrics finds no prom-client.
import 'ipallocator/metrics';
import { Registry } from 'prom-client';
import { Allocator, MemoryStore } from 'ipallocator';

const registry = new Registry();
const alloc = new Allocator('10.0.0.0/24', { store: new MemoryStore() });
alloc.enableMetrics(registry);
await alloc.allocateNext();
const text = await registry.metrics();
if (!text.includes('kube_apiserver_clusterip_allocator_allocated_ips{cidr="10.0.0.0/24"} 1'))
  throw new Error('metrics in a bundle: no gauge');
alloc.destroy();
