// A process that gets one IPAddress through a cluster's https:// proxy-url, for
// test/kubernetes-untrusted-certificate.test.ts, which runs it with the proxy's CA given to the
// runtime as the message of an untrusted proxy advises (NODE_EXTRA_CA_CERTS, DENO_CERT, --cert):
// those are read as the process starts.
//
//   usage: proxy-get-child.ts <server URL> <the server's CA, PEM> <proxy URL> [client-node-1]
//
// Writes the message the get failed with (the server's `{}` is no IPAddress: any answer fails
// it) as one line, closes the store and exits. With `client-node-1`, the KubeConfig is client-node
// 1.x's.
import { KubeConfig } from '@kubernetes/client-node';
import { KubeConfig as KubeConfig1 } from 'client-node-1';
import { KubernetesStore } from '../../adapters/kubernetes/index.ts';

const [server, ca, proxyUrl, version] = process.argv.slice(2);
if (!server || !ca || !proxyUrl || (version !== undefined && version !== 'client-node-1')) {
  process.stderr.write('usage: proxy-get-child.ts <server URL> <the server CA, PEM> <proxy URL> [client-node-1]\n');
  process.exit(64);
}
const kc = version === undefined ? new KubeConfig() : (new KubeConfig1() as unknown as KubeConfig);
kc.loadFromOptions({
  clusters: [{ name: 'prod', server, caData: Buffer.from(ca).toString('base64'), proxyUrl }],
  users: [{ name: 'dev', token: 't' }],
  contexts: [{ name: 'x', cluster: 'prod', user: 'dev' }],
  currentContext: 'x',
});
const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 20_000 });
try {
  await store.get('10.0.0.1');
  process.stdout.write('resolved\n');
} catch (e) {
  process.stdout.write(`${(e as Error).message}\n`);
} finally {
  store.close();
}
