// CommonJS: require() of the ES module package (Node 20.19+; no top-level await in its graph).
const assert = require('node:assert/strict');
const { Allocator, MemoryStore, Range } = require('ipallocator');
const { canonicalAddr } = require('ipallocator/core');
const { registerMetrics } = require('ipallocator/metrics');
const { Registry } = require('prom-client');

(async () => {
  const registry = new Registry();
  const alloc = Allocator.create('10.96.0.0/28', { store: new MemoryStore(), metrics: registry });
  const ip = await alloc.allocateNext();
  assert.ok(await alloc.has(ip));
  assert.equal((await registerMetrics(registry).allocated.get()).values[0].value, 1);
  alloc.destroy();
  const range = new Range('10.0.0.0/30');
  assert.deepEqual([range.allocateNext(), range.allocateNext()].sort(), ['10.0.0.1', '10.0.0.2']);
  range.destroy();
  assert.equal(canonicalAddr('FD00:0:0:0::A'), 'fd00::a');
  console.log('cjs: ok');
})().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
