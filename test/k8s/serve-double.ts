// Serves the API-server double from its own process, for trying test/kubernetes-cluster.test.ts
// (or anything else that takes a KUBECONFIG) without a cluster:
//
//   npx tsx test/k8s/serve-double.ts          # prints: KUBECONFIG=/tmp/ipallocator-kubeconfig-…/config
//   KUBECONFIG=… IPALLOCATOR_CLUSTER_TESTS=1 npx vitest run test/kubernetes-cluster.test.ts
//
// Binds 127.0.0.1 on an ephemeral port; the 422 check for a missing parentRef is on, like a real
// server. Stops (and removes the kubeconfig) on SIGINT/SIGTERM or when stdin closes.
import { ApiServerDouble } from './apiserver-double.ts';
import { writeKubeconfig } from './kubeconfig.ts';

const d = await ApiServerDouble.start({ requireParentRef: true });
const kc = writeKubeconfig(d.url);
process.stdout.write(`KUBECONFIG=${kc.path}\n`);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  kc.remove();
  await d.close();
  process.exit(0);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
process.stdin.on('end', () => void stop());
process.stdin.resume();
