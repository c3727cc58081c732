// `check --fix` works on several leaks at once (FIX_CONCURRENCY), each leak's own reads and delete
// one after another, and reports as if it had fixed them one at a time: every list in the order of
// the findings, and each "deleted" line too, whatever order the deletes were answered in.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CheckReport, FIX_CONCURRENCY } from '../cli/check.ts';
import { addIPAddress, addServiceCIDR, type Cluster, cli, startCluster } from './cli-helpers.ts';
import { until } from './k8s/helpers.ts';

const later = () => Date.now() + 61_000;
const names = (c: Cluster) => c.double.objects().map((o) => o.metadata.name);

describe('check --fix on many leaks', () => {
  let c: Cluster;
  beforeEach(async () => {
    c = await startCluster();
    addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/24'], true);
  });
  afterEach(async () => {
    await c.close();
  });

  it('deletes several at once, and reports them as one at a time would: in the order of the findings, whatever order they were answered in', async () => {
    const leaks = [...Array(20).keys()].map((i) => `10.96.0.${10 + i}`);
    for (const ip of leaks) addIPAddress(c.double, ip, { namespace: 'default', name: 'gone' });
    c.double.denyAccess('delete', 'ipaddresses', '10.96.0.15'); // RBAC with resourceNames: that one refused
    // the first delete, sent alone, answered at once; the next one answered only once every
    // other delete has been: answered last
    const [first, late] = [c.double.holdReply('delete'), c.double.holdReply('delete')];
    void first.applied.then(() => first.release());
    void late.applied.then(async () => {
      await until(() => c.double.requestsOf('delete').length === leaks.length, 'every other delete');
      late.release();
    });
    const r = await cli(['check', '--fix', '--yes', '--json', '--kubeconfig', c.kubeconfig], { now: later });
    const deleted = leaks.filter((ip) => ip !== '10.96.0.15');
    expect(c.double.mostInFlight('DELETE')).toBeGreaterThan(1);
    expect(c.double.mostInFlight('DELETE')).toBeLessThanOrEqual(FIX_CONCURRENCY);
    expect(names(c)).toEqual(['10.96.0.15']);
    const fixed = (JSON.parse(r.stdout) as CheckReport).fixed!;
    expect(fixed).toEqual({
      deleted,
      skipped: [],
      failed: [{ ip: '10.96.0.15', error: expect.stringMatching(/^permission denied: /), denied: true }],
      stoppedBy: null,
      untried: [],
      declined: false,
    });
    expect(r.stderr).toBe(
      deleted.map((ip) => `deleted IPAddress ${ip}\n`).join('') +
        'ipallocator: --fix was refused (403 Forbidden) for IPAddress 10.96.0.15; not fixed: 1 of 20 IPAddresses (1 refused (403 Forbidden))\n',
    );
    expect(r.code).toBe(2);
    // every leak was read again, with its Service, before its delete
    for (const ip of leaks) {
      const paths = c.double.requests.map((q) => `${q.verb} ${q.path}`);
      const read = paths.indexOf(`get /apis/networking.k8s.io/v1/ipaddresses/${ip}`);
      expect(paths.indexOf(`delete /apis/networking.k8s.io/v1/ipaddresses/${ip}`)).toBeGreaterThan(read);
      expect(read).toBeGreaterThan(-1);
    }
    expect(c.double.requestsOf('get').filter((q) => q.path === '/api/v1/namespaces/default/services/gone')).toHaveLength(leaks.length);
  });

  it('an interrupt (Ctrl-C) stops it after the leaks under way: every one of them settled and reported, the rest not tried, exit 130', async () => {
    const leaks = [...Array(12).keys()].map((i) => `10.96.0.${10 + i}`);
    for (const ip of leaks) addIPAddress(c.double, ip, { namespace: 'default', name: 'gone' });
    const [first, late] = [c.double.holdReply('delete'), c.double.holdReply('delete')];
    void first.applied.then(() => first.release());
    const r = await cli(['check', '--fix', '--yes', '--json', '--kubeconfig', c.kubeconfig], {
      now: later,
      onInterrupt: (stop) => {
        // the operator presses Ctrl-C as the first of the leaks fixed together is deleted
        void late.applied.then(() => {
          stop('SIGINT');
          late.release();
        });
        return () => {};
      },
    });
    const tried = leaks.slice(0, 1 + FIX_CONCURRENCY);
    expect(r.code).toBe(130);
    expect(r.stderr).toBe(
      `deleted IPAddress ${tried[0]}\n` +
        `Interrupted: stopping after the ${FIX_CONCURRENCY} IPAddresses under way (interrupt again to end at once).\n` +
        tried
          .slice(1)
          .map((ip) => `deleted IPAddress ${ip}\n`)
          .join('') +
        'ipallocator: --fix stopped: interrupted (Ctrl-C)\n',
    );
    const fixed = (JSON.parse(r.stdout) as CheckReport).fixed!;
    expect([fixed.deleted, fixed.stoppedBy, fixed.untried]).toEqual([tried, 'interrupted (Ctrl-C)', leaks.slice(tried.length)]);
    expect(names(c)).toEqual(leaks.slice(tried.length));
  });
});
