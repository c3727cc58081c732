// Installed without prom-client (an optional peer dependency): the package loads, allocates, and
// enabling metrics fails with a typed error that says what to install.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Allocator, IPAllocatorError, MemoryStore } from 'ipallocator';

const alloc = Allocator.create('10.96.0.0/28', { store: new MemoryStore() });
assert.equal(await alloc.allocate('10.96.0.1'), undefined);
assert.throws(
  () => alloc.enableMetrics(),
  (e) => e instanceof IPAllocatorError && /npm install prom-client/.test(e.message),
);
alloc.destroy();
assert.throws(() => createRequire(import.meta.url).resolve('prom-client'), /Cannot find module/);
console.log('no-prom-client: ok');
