// docs/kubernetes.md: a create or delete whose TLS handshake did not complete when its deadline
// passed never reached the server, and is not read back. A KubeConfig of client-node 1.x is taken
// by its shape where 2.x is installed (docs/kubernetes.md), and its requests are then sent by
// 1.x's own HTTP library: the same holds for them, and a request written before its answer was
// lost is still read back.
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeConfig as KubeConfig1 } from 'client-node-1';
import { describe, expect, it } from 'vitest';
import { KubernetesApiError, KubernetesStore } from '../adapters/kubernetes/index.ts';
import { allocatorLabels } from '../adapters/store.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { kubeConfigFor } from './k8s/kubeconfig.ts';
import { SilentServer } from './k8s/silent-server.ts';

const WEB = { group: '', resource: 'services', namespace: 'default', name: 'web' };

describe('a KubeConfig of client-node 1.x, where 2.x is installed: a TLS handshake that never completes', () => {
  it.each(['create', 'delete'] as const)('a %s: its deadline passes, nothing is read back, and the error says only that', async (verb) => {
    const silent = await SilentServer.start();
    const server = silent.url.replace('http://', 'https://');
    const s = new KubernetesStore(kubeConfigFor(server, undefined, { Config: KubeConfig1 as unknown as typeof KubeConfig }), {
      start: false,
      requestTimeoutMs: 500,
    });
    try {
      const call =
        verb === 'create' ? s.create({ name: '10.0.0.1', labels: allocatorLabels('IPv4'), parentRef: WEB }) : s.delete('10.0.0.1');
      const err = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(KubernetesApiError);
      expect((err as Error).message).toBe(
        `${verb} ipaddresses.networking.k8s.io "10.0.0.1": no answer from ${server} within 500 ms (requestTimeoutMs)`,
      );
    } finally {
      s.close();
      await silent.close();
    }
  });

  it.each(['create', 'delete'] as const)(
    'a %s written, whose connection dropped after the server took it: read back, and resolves',
    async (verb) => {
      const d = await ApiServerDouble.start({ tls: true });
      const s = new KubernetesStore(kubeConfigFor(d.url, undefined, { Config: KubeConfig1 as unknown as typeof KubeConfig }), {
        start: false,
        requestTimeoutMs: 2000,
      });
      try {
        if (verb === 'delete') await s.create({ name: '10.0.0.1', labels: allocatorLabels('IPv4'), parentRef: WEB });
        d.dropAfterCommit(verb);
        if (verb === 'create') await s.create({ name: '10.0.0.1', labels: allocatorLabels('IPv4'), parentRef: WEB });
        else await s.delete('10.0.0.1');
        expect([d.requestsOf('get').length, d.objects().length]).toEqual([1, verb === 'create' ? 1 : 0]);
      } finally {
        s.close();
        await d.close();
      }
    },
  );
});
