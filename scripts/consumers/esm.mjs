// ESM: every entry point loads; prom-client is not loaded until metrics are enabled, and then it
// is the app's own copy (its default registry shows the allocator's metrics).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Allocator, ErrFull, MemoryStore, Range } from 'ipallocator';
import { calculateRangeOffset, canonicalAddr, hostsPerNetwork } from 'ipallocator/core';

const require = createRequire(import.meta.url);
const promClientLoaded = () => Object.keys(require.cache).some((f) => f.includes('/node_modules/prom-client/'));

const alloc = Allocator.create('10.96.0.0/28', { store: new MemoryStore() });
const ip = await alloc.allocateNext();
assert.ok(await alloc.has(ip));
assert.equal(promClientLoaded(), false, 'prom-client loaded although metrics are off');
alloc.enableMetrics();
assert.equal(promClientLoaded(), true);
const { register } = await import('prom-client');
assert.match(await register.metrics(), /kube_apiserver_clusterip_allocator_allocated_ips\{cidr="10.96.0.0\/28"\} 1/);
await assert.rejects(async () => {
  for (;;) await alloc.allocateNext();
}, ErrFull);
alloc.destroy();

const { registerMetrics, METRIC_ALLOCATED_IPS } = await import('ipallocator/metrics');
assert.equal(registerMetrics().allocated, register.getSingleMetric(METRIC_ALLOCATED_IPS));

const range = new Range('fd00::/120');
assert.equal(range.free(), 255n);
range.destroy();
assert.equal(canonicalAddr('2001:DB8:0:0:0::1'), '2001:db8::1');
assert.equal(hostsPerNetwork('10.96.0.0/12'), 1048574n);
assert.equal(calculateRangeOffset('10.96.0.0/12'), 256);
console.log('esm: ok');
