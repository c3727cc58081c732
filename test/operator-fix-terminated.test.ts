// What an operator is left with when `check --fix` is ended by SIGTERM rather than Ctrl-C: a
// Kubernetes Job or CronJob past its activeDeadlineSeconds, `timeout 5m ipallocator check --fix
// --yes` in CI, a `kill` from a supervisor. Each is a SIGTERM. The deletes already made stay made,
// so the log must say which they were: otherwise nobody can tell what the run changed.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { until } from './k8s/helpers.ts';
import { addIPAddress, addServiceCIDR, startCluster, type Cluster } from './cli-helpers.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('ipallocator check --fix ended by SIGTERM', () => {
  let c: Cluster;
  beforeEach(async () => {
    c = await startCluster();
  });
  afterEach(async () => {
    await c.close();
  });

  // a process to start: on a loaded machine, that alone may take tens of seconds
  it('still names every IPAddress it had deleted before the signal', { timeout: 180_000 }, async () => {
    addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/24'], true);
    const leaks = Array.from({ length: 20 }, (_, i) => `10.96.0.${100 + i}`);
    for (const [i, ip] of leaks.entries()) addIPAddress(c.double, ip, { namespace: 'shop', name: `gone-${i}` });
    c.double.setLatency(150, 'delete'); // a busy API server: each delete takes a while
    // the first leak's read answered at once, the next one's only after the signal: its object is
    // still there when the signal comes, whatever the machine's load
    const [first, held] = [c.double.holdReply('get'), c.double.holdReply('get')];
    void first.applied.then(() => first.release());

    const args = ['check', '--fix', '--yes', '--grace', '0s', '--kubeconfig', c.kubeconfig];
    const child = spawn(
      process.execPath,
      'Deno' in globalThis ? ['run', '-A', 'cli/bin.ts', ...args] : ['--import', 'tsx', 'cli/bin.ts', ...args],
      {
        cwd: ROOT,
        env: { ...process.env, NO_COLOR: '1' },
      },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d));
    child.stderr.on('data', (d: Buffer) => (output += d));
    const ended = new Promise<void>((resolve) => child.on('close', () => resolve()));

    const gone = () => leaks.filter((ip) => !c.double.objects().some((o) => o.metadata.name === ip));
    await held.applied;
    await until(() => gone().length >= 3, 'three deletes');
    // at once: an answer still on its way belongs to the leak under way, which the signal lets finish
    const deletedBeforeSignal = gone();
    child.kill('SIGTERM');
    held.release();
    await ended;

    expect(deletedBeforeSignal.length).toBeLessThan(leaks.length); // the signal came mid-run
    for (const ip of deletedBeforeSignal) expect(output).toContain(ip);
  });
});
