// check --fix with one leak slower than the others (its get held): what the stop after refusals and
// the trace of deletes on stderr promise must hold while it waits.
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckReport } from '../cli/check.ts';
import { run } from '../cli/main.ts';
import { addIPAddress, addServiceCIDR, type Cluster, startCluster } from './cli-helpers.ts';
import { until } from './k8s/helpers.ts';

const later = () => Date.now() + 61_000;

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
  let c: Cluster;
  beforeEach(async () => {
    c = await startCluster();
    addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/24'], true);
  });
  afterEach(async () => {
    await c.close();
  });

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
