// One racing allocator process for test/kubernetes-race.test.ts. Plain JavaScript over the BUILT
// package (dist/, from `npm run build`), so the same file runs under Node (`node race-worker.mjs`)
// and Deno (`deno run -A race-worker.mjs`).
//
//   usage: race-worker.mjs <cidr> <service-name>        (KUBECONFIG names the API server)
//
// Protocol, one JSON object per line on stdout:
//   {"ready":true}                       after the store has synced and the allocator exists
//   (waits for a line "go" on stdin — the barrier that starts every worker at once)
//   {"done":true,"ips":[…],"elapsedMs":n,"used":n,"free":"0"}
//                                        after allocateNext(owner) answered "range is full" and
//                                        the cache caught up (used/free as the allocator sees them)
//   {"done":false,"error":"…","ips":[…]}  on any other error (exit code 2)
// Every allocation is owned by the Service default/<service-name>.
import { createInterface } from 'node:readline';
import { Allocator, ErrFull } from '../../dist/adapters/index.js';
import { KubernetesStore } from '../../dist/adapters/kubernetes/index.js';

const [cidr, service] = process.argv.slice(2);
if (!cidr || !service) {
  process.stderr.write('usage: race-worker.mjs <cidr> <service-name>\n');
  process.exit(64);
}
const owner = { group: '', resource: 'services', namespace: 'default', name: service };

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

const store = new KubernetesStore(undefined, { backoff: { initialMs: 5, maxMs: 100 } });
await store.waitForSync({ timeoutMs: 60_000 });
const allocator = Allocator.create(cidr, { store });

const lines = createInterface({ input: process.stdin });
const go = new Promise((resolve) => lines.on('line', (l) => l.trim() === 'go' && resolve()));
send({ ready: true });
await go;
lines.close();

const ips = [];
let code = 0;
const start = performance.now();
try {
  for (;;) {
    try {
      ips.push(await allocator.allocateNext(owner));
    } catch (e) {
      if (e instanceof ErrFull) break;
      throw e;
    }
  }
  const elapsedMs = performance.now() - start;
  // The index converges: once the watch has delivered every worker's objects, used() is the
  // whole range (bounded wait; the test asserts the value).
  for (let i = 0; i < 3000 && allocator.free() > 0n; i++) await new Promise((r) => setTimeout(r, 10));
  send({ done: true, ips, elapsedMs, used: allocator.used(), free: String(allocator.free()) });
} catch (e) {
  send({ done: false, error: String(e?.message ? e.message : e), ips });
  code = 2;
} finally {
  allocator.destroy();
  store.close();
}
process.exit(code);
