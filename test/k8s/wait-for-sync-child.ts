// A process that waits for a KubernetesStore's first sync without a timeout, for
// test/kubernetes-store.test.ts, which runs it under Deno with a permission left out: Deno's
// refusal, as its own fetch raises it, must end the wait.
//
//   usage: deno run --allow-env … wait-for-sync-child.ts <server URL>
//
// Writes how waitForSync() ended, as one line of JSON, closes the store and exits.
import { KubernetesStore } from '../../adapters/kubernetes/index.ts';
import { kubeConfigFor } from './kubeconfig.ts';

const server = process.argv[2];
if (!server) {
  process.stderr.write('usage: wait-for-sync-child.ts <server URL>\n');
  process.exit(64);
}
const store = new KubernetesStore(kubeConfigFor(server));
try {
  await store.waitForSync();
  process.stdout.write(`${JSON.stringify({ synced: true })}\n`);
} catch (e) {
  const { name, code, flag } = e as { name?: unknown; code?: unknown; flag?: unknown };
  process.stdout.write(`${JSON.stringify({ name, code, flag, message: (e as Error).message })}\n`);
} finally {
  store.close();
}
