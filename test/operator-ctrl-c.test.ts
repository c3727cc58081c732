// What the exit-code line of the help promises for a command that no signal handler stops in order:
// Ctrl-C during `status` (or `check` while it lists) ends the process by SIGINT, which a shell
// reports as exit 130, and leaves standard output empty (a `--json` reader gets nothing).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addServiceCIDR, startCluster, type Cluster } from './cli-helpers.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

// each test starts a process: on a loaded machine, that alone may take tens of seconds
describe('ipallocator ended by Ctrl-C outside check --fix', { timeout: 180_000 }, () => {
  let c: Cluster;
  beforeEach(async () => {
    c = await startCluster();
  });
  afterEach(async () => {
    await c.close();
  });

  it.each([['status'], ['check']])('%s --json ends as SIGINT ends a command, with nothing on standard output', async (command) => {
    addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/24'], true);
    c.double.setLatency(5_000, 'list'); // the listing is under way when Ctrl-C comes
    const args = [command, '--json', '--kubeconfig', c.kubeconfig];
    const child = spawn(
      process.execPath,
      'Deno' in globalThis ? ['run', '-A', 'cli/bin.ts', ...args] : ['--import', 'tsx', 'cli/bin.ts', ...args],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } },
    );
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    const ended = new Promise<[number | null, string | null]>((resolve) => child.on('close', (code, signal) => resolve([code, signal])));
    const listing = () => c.double.requestsOf('list').length > 0;
    while (!listing()) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGINT');
    const [code, signal] = await ended;
    // ended by the signal itself (the shell's 130), or exiting with that code
    expect(signal === 'SIGINT' || code === 130).toBe(true);
    expect(stdout).toBe('');
  });
});
