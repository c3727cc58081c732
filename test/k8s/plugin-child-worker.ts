// A process that uses KubernetesStore through a user whose exec credential plugin never answers
// and leaves a child of its own behind, for test/kubernetes-store.test.ts: the child holds the
// plugin's stdout and stderr after the plugin is stopped. Run from source, by the runtime running
// the test (`node --import tsx`, or `deno run -A`).
//
//   usage: plugin-child-worker.ts <plugin-shell-script>
//
// Writes "refused: <message>" then "closed" on stdout, and must then exit on its own.
import { KubeConfig } from '@kubernetes/client-node';
import { KubernetesStore } from '../../adapters/kubernetes/index.ts';

const script = process.argv[2];
if (!script) {
  process.stderr.write('usage: plugin-child-worker.ts <plugin-shell-script>\n');
  process.exit(64);
}
const kc = new KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: 'c', server: 'https://127.0.0.1:9', skipTLSVerify: false }],
  users: [
    {
      name: 'u',
      exec: { apiVersion: 'client.authentication.k8s.io/v1', command: '/bin/sh', args: ['-c', script], interactiveMode: 'Never' },
    },
  ],
  contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
  currentContext: 'c',
});
const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 1500 });
const said = await store.get('10.0.0.1').then(
  () => 'answered',
  (e: unknown) => `refused: ${e instanceof Error ? e.message : String(e)}`,
);
process.stdout.write(`${said}\n`);
store.close();
process.stdout.write('closed\n');
