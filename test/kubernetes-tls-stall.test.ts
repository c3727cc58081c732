// docs/kubernetes.md: a create or delete whose TLS handshake did not complete when its deadline
// passed never reached the server, and is not read back; a request written before its answer was
// lost still is. A server (a load balancer with no backend, a stalled API server) that takes the
// connection and the ClientHello and never answers. With client-node 2.x's KubeConfig, and with a
// KubeConfig of client-node 1.x, taken by its shape where 2.x is installed (docs/kubernetes.md),
// whose requests are then sent by 1.x's own HTTP library. 1.x installed alone:
// kubernetes-client-node-1-only.test.ts.
import { describe, expect, it } from 'vitest';
import { KubernetesApiError, KubernetesStore } from '../adapters/kubernetes/index.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { BOTH_CLIENT_NODES, kubeConfigFor } from './k8s/kubeconfig.ts';
import { outcome, record } from './k8s/lost-answers.ts';
import { SilentServer } from './k8s/silent-server.ts';

describe.each(BOTH_CLIENT_NODES)('a KubeConfig of client-node %s: a TLS handshake that never completes', (_version, Config) => {
  it.each(['create', 'delete'] as const)('a %s: its deadline passes, nothing is read back, and the error says only that', async (verb) => {
    const silent = await SilentServer.start();
    const server = silent.url.replace('http://', 'https://');
    const s = new KubernetesStore(kubeConfigFor(server, undefined, { Config }), { start: false, requestTimeoutMs: 500 });
    try {
      const err = await outcome(verb === 'create' ? s.create(record('10.0.0.1')) : s.delete('10.0.0.1'));
      expect(err).toBeInstanceOf(KubernetesApiError);
      expect((err as Error).message).toBe(
        `${verb} ipaddresses.networking.k8s.io "10.0.0.1": no answer from ${server} within 500 ms (requestTimeoutMs)`,
      );
      expect(silent.requests, 'HTTP requests the server read').toBe(0);
    } finally {
      s.close();
      await silent.close();
    }
  });

  it.each(['create', 'delete'] as const)(
    'a %s written, whose connection dropped after the server took it: read back, and resolves',
    async (verb) => {
      const d = await ApiServerDouble.start({ tls: true });
      const s = new KubernetesStore(kubeConfigFor(d.url, undefined, { Config }), { start: false, requestTimeoutMs: 2000 });
      try {
        if (verb === 'delete') await s.create(record('10.0.0.1'));
        d.dropAfterCommit(verb);
        await (verb === 'create' ? s.create(record('10.0.0.1')) : s.delete('10.0.0.1'));
        expect([d.requestsOf('get').length, d.objects().length]).toEqual([1, verb === 'create' ? 1 : 0]);
      } finally {
        s.close();
        await d.close();
      }
    },
  );
});
