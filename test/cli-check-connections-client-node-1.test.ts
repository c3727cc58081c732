// `check --fix` where @kubernetes/client-node is 1.x, installed alone (mocked to the client-node-1
// package, as kubernetes-client-node-1-only.test.ts does): its requests share their connections as
// 2.x's do (kubernetes-reused-connections.test.ts).
import { describe, expect, it, vi } from 'vitest';
import { type CheckReport, FIX_CONCURRENCY } from '../cli/check.ts';
import { addIPAddress, addServiceCIDR, cli, startCluster } from './cli-helpers.ts';
import { until } from './k8s/helpers.ts';

vi.mock('@kubernetes/client-node', () => import('client-node-1'));

describe('check --fix with client-node 1.x', () => {
  // Regression: 1.x makes an https.Agent for each request, without keep-alive: a TLS connection
  // per request, three per leak.
  it('fixing 40 leaks over https opens no connection per request: each request goes on one already open', async () => {
    const c = await startCluster({ tls: true });
    try {
      addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/24'], true);
      const leaks = [...Array(40).keys()].map((i) => `10.96.0.${10 + i}`);
      for (const ip of leaks) addIPAddress(c.double, ip, { namespace: 'default', name: 'gone' });
      const r = await cli(['check', '--fix', '--yes', '--json', '--kubeconfig', c.kubeconfig], { now: () => Date.now() + 61_000 });
      expect((JSON.parse(r.stdout) as CheckReport).fixed!.deleted).toEqual(leaks);
      expect(c.double.requests).toHaveLength(3 + 3 * leaks.length); // three lists, then a read, a Service read and a delete per leak
      // one connection per leak under way at most (FIX_CONCURRENCY), not one per leak or per request
      expect(c.double.connectionsAccepted).toBeLessThanOrEqual(FIX_CONCURRENCY);
      await until(() => c.double.openConnections === 0, 'the connection closed with the command');
    } finally {
      await c.close();
    }
  });
});
