// `check --fix` works on several leaks at once (FIX_CONCURRENCY), each leak's own reads and delete
// one after another, and reports as if it had fixed them one at a time: every list in the order of
// the findings, whatever order the deletes were answered in; each "deleted" line is written as soon
// as its delete was answered. With one leak slower than the others (its get held), the stop after
// refusals and that trace of deletes hold while it waits.
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CheckReport, FIX_CONCURRENCY, REFUSED_IN_A_ROW } from '../cli/check.ts';
import { run } from '../cli/main.ts';
import { addIPAddress, addServiceCIDR, type Cluster, cli, startCluster } from './cli-helpers.ts';
import { until } from './k8s/helpers.ts';

const later = () => Date.now() + 61_000;
const names = (c: Cluster) => c.double.objects().map((o) => o.metadata.name);

// every test: a cluster whose ServiceCIDR 10.96.0.0/24 holds the leaks it adds
let c: Cluster;
beforeEach(async () => {
  c = await startCluster();
  addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/24'], true);
});
afterEach(async () => {
  await c.close();
});

describe('check --fix on many leaks', () => {
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
    // each delete said as soon as it was answered: the one answered last, last
    const said = r.stderr.split('\n');
    expect(said.slice(0, deleted.length).sort()).toEqual(deleted.map((ip) => `deleted IPAddress ${ip}`).sort());
    const answeredLast = c.double.requestsOf('delete')[1]!.path.split('/').pop();
    expect(said[deleted.length - 1]).toBe(`deleted IPAddress ${answeredLast}`);
    expect(said.slice(deleted.length)).toEqual([
      'ipallocator: --fix was refused (403 Forbidden) for IPAddress 10.96.0.15; not fixed: 1 of 20 IPAddresses (1 refused (403 Forbidden))',
      '',
    ]);
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
    // the first leak's line before the interrupt, the others' in the order their deletes were answered
    const said = r.stderr.split('\n');
    expect(said[0]).toBe(`deleted IPAddress ${tried[0]}`);
    expect(said.filter((l) => l.startsWith('Interrupted'))).toEqual([
      `Interrupted: stopping after the ${FIX_CONCURRENCY} IPAddresses under way (interrupt again to end at once).`,
    ]);
    expect(said.filter((l) => l.startsWith('deleted')).sort()).toEqual(tried.map((ip) => `deleted IPAddress ${ip}`).sort());
    expect(said.slice(-2)).toEqual(['ipallocator: --fix stopped: interrupted (Ctrl-C)', '']);
    const fixed = (JSON.parse(r.stdout) as CheckReport).fixed!;
    expect([fixed.deleted, fixed.stoppedBy, fixed.untried]).toEqual([tried, 'interrupted (Ctrl-C)', leaks.slice(tried.length)]);
    expect(names(c)).toEqual(leaks.slice(tried.length));
  });

  // Regression: with no permission to delete IPAddresses, each of thousands of leaks was tried
  // and refused in turn
  it(`stops once the same request about an IPAddress was refused (403) for ${REFUSED_IN_A_ROW} leaks in a row: the rest not tried, saying which permission is missing`, async () => {
    const leaks = [...Array(60).keys()].map((i) => `10.96.0.${10 + i}`);
    for (const ip of leaks) addIPAddress(c.double, ip, { namespace: 'default', name: 'gone' });
    c.double.denyAccess('delete', 'ipaddresses');
    const r = await cli(['check', '--fix', '--yes', '--json', '--kubeconfig', c.kubeconfig], { now: later });
    const stoppedBy =
      `the API server refused delete ipaddresses.networking.k8s.io for ${REFUSED_IN_A_ROW} IPAddresses in a row (403 Forbidden): ` +
      'context "double" needs RBAC verb "delete" on resource "ipaddresses" (API group "networking.k8s.io") ' +
      '(its refusal does not say whether it is for every IPAddress or for these only), so ';
    const fixed = (JSON.parse(r.stdout) as CheckReport).fixed!;
    const tried = fixed.failed.length;
    const untried = `${leaks.length - tried} others were not tried`;
    expect([r.code, r.stderr]).toEqual([2, `ipallocator: --fix stopped: ${stoppedBy}${untried}\n`]);
    // those under way when the tenth refusal came were settled too: refused as well
    expect(tried).toBeGreaterThanOrEqual(REFUSED_IN_A_ROW);
    expect(tried).toBeLessThanOrEqual(REFUSED_IN_A_ROW + FIX_CONCURRENCY);
    expect(fixed).toEqual({
      deleted: [],
      skipped: [],
      failed: leaks.slice(0, tried).map((ip) => ({ ip, error: expect.stringMatching(/^permission denied: /), denied: true })),
      stoppedBy: stoppedBy + untried,
      untried: leaks.slice(tried),
      declined: false,
    });
    expect(c.double.requestsOf('delete')).toHaveLength(tried);
  });

  it(`says no IPAddress was left untried when the ${REFUSED_IN_A_ROW}th refusal in a row came from the last leak`, async () => {
    const leaks = [...Array(REFUSED_IN_A_ROW).keys()].map((i) => `10.96.0.${10 + i}`);
    for (const ip of leaks) addIPAddress(c.double, ip, { namespace: 'default', name: 'gone' });
    c.double.denyAccess('delete', 'ipaddresses');
    const r = await cli(['check', '--fix', '--yes', '--json', '--kubeconfig', c.kubeconfig], { now: later });
    const fixed = (JSON.parse(r.stdout) as CheckReport).fixed!;
    expect([fixed.failed.length, fixed.untried]).toEqual([leaks.length, []]);
    expect(fixed.stoppedBy).toMatch(/\(its refusal does not say whether it is for every IPAddress or for these only\)$/);
  });

  it('refusals about Services (RBAC per namespace) or about IPAddresses interrupted by one allowed do not stop it', async () => {
    const leaks = [...Array(24).keys()].map((i) => `10.96.0.${10 + i}`);
    for (const ip of leaks) addIPAddress(c.double, ip, { namespace: 'team-a', name: 'gone' });
    addIPAddress(c.double, '10.96.0.40', { namespace: 'team-b', name: 'gone' });
    c.double.denyAccess('get', 'services', 'team-a/gone'); // no Service may be read in team-a
    const r = await cli(['check', '--fix', '--yes', '--json', '--kubeconfig', c.kubeconfig], { now: later });
    const fixed = (JSON.parse(r.stdout) as CheckReport).fixed!;
    expect([fixed.deleted, fixed.failed.length, fixed.stoppedBy, fixed.untried]).toEqual([['10.96.0.40'], leaks.length, null, []]);

    // RBAC resourceNames: nine refused, then one allowed, nine refused again, …
    c.double.allowAll();
    const more = [...Array(30).keys()].map((i) => `10.96.1.${10 + i}`);
    addServiceCIDR(c.double, 'more', ['10.96.1.0/24'], true);
    for (const ip of more) addIPAddress(c.double, ip, { namespace: 'default', name: 'gone' });
    for (const [i, ip] of more.entries()) if (i % 10 !== 9) c.double.denyAccess('delete', 'ipaddresses', ip);
    const again = await cli(['check', '--fix', '--yes', '--json', '--kubeconfig', c.kubeconfig], { now: later });
    const fixedAgain = (JSON.parse(again.stdout) as CheckReport).fixed!;
    // team-a's leaks are deleted now too: its Services may be read
    expect([fixedAgain.deleted, fixedAgain.stoppedBy, fixedAgain.untried]).toEqual([
      [...leaks, '10.96.1.19', '10.96.1.29', '10.96.1.39'],
      null,
      [],
    ]);
  });
});

async function cliLive(argv: string[]) {
  const out = { stdout: '', stderr: '' };
  const stdin = Object.assign(Readable.from([]), { isTTY: false });
  const done = run(argv, {
    stdout: { write: (s: string) => (out.stdout += s), isTTY: false },
    stderr: { write: (s: string) => (out.stderr += s), isTTY: false },
    stdin,
    now: later,
  });
  return { out, done };
}

describe('check --fix while one leak is slow', () => {
  it('stops after ten refusals in a row even while an earlier leak is still under way', async () => {
    const leaks = [...Array(60).keys()].map((i) => `10.96.0.${10 + i}`);
    for (const ip of leaks) addIPAddress(c.double, ip, { namespace: 'default', name: 'gone' });
    c.double.denyAccess('delete', 'ipaddresses');
    const first = c.double.holdReply('get');
    const slow = c.double.holdReply('get');
    void first.applied.then(() => first.release());
    const { out, done } = await cliLive(['check', '--fix', '--yes', '--json', '--kubeconfig', c.kubeconfig]);
    await slow.applied;
    const t0 = Date.now();
    await until(() => c.double.requestsOf('delete').length >= 59 || Date.now() - t0 > 3000, 'deletes');
    const sentWhileOneWasSlow = c.double.requestsOf('delete').length;
    slow.release();
    const code = await done;
    const fixed = (JSON.parse(out.stdout) as CheckReport).fixed!;
    expect(code).toBe(2);
    expect(fixed.untried.length).toBeGreaterThan(0); // the error says the others were not tried
    expect(sentWhileOneWasSlow).toBeLessThanOrEqual(10 + 8);
  });

  it('writes a line for each delete made while an earlier leak is still under way (the trace a SIGKILL leaves)', async () => {
    const leaks = [...Array(60).keys()].map((i) => `10.96.0.${10 + i}`);
    for (const ip of leaks) addIPAddress(c.double, ip, { namespace: 'default', name: 'gone' });
    const first = c.double.holdReply('get');
    const slow = c.double.holdReply('get');
    void first.applied.then(() => first.release());
    const { out, done } = await cliLive(['check', '--fix', '--yes', '--json', '--kubeconfig', c.kubeconfig]);
    await slow.applied;
    await until(() => c.double.objects().length <= 1, 'deletes');
    const saidSoFar = out.stderr.split('\n').filter((l) => l.startsWith('deleted')).length;
    const deletedAtServer = leaks.length - c.double.objects().length;
    slow.release();
    await done;
    expect(saidSoFar).toBeGreaterThanOrEqual(deletedAtServer - 8);
  });
});
