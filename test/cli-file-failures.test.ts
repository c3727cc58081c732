// Files the command line cannot open, read or write — --kubeconfig, --snapshot, a file of
// $KUBECONFIG, ~/.kube/config, --out —, each said by name and in words with fs's code last,
// as a certificate file of the kubeconfig is (adapters/fs-failure.ts), never in fs's own words
// ("EACCES: permission denied, open '…'"). One line, exit 2, no request sent.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './cli-helpers.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** `run` with $KUBECONFIG set to `list` (unset when undefined) and $HOME to `home`, both put back after. */
async function withEnvironment<T>(env: { KUBECONFIG?: string; HOME?: string }, run: () => Promise<T>): Promise<T> {
  const saved = { KUBECONFIG: process.env.KUBECONFIG, HOME: process.env.HOME };
  for (const [k, v] of Object.entries(env)) process.env[k] = v;
  if (!('KUBECONFIG' in env)) delete process.env.KUBECONFIG;
  try {
    return await run();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('ipallocator: a file that cannot be read or written is said by name, in words', () => {
  let dir: string;
  /** A regular file, where a folder of a path belongs: every path under it fails with ENOTDIR. */
  let file: string;
  /** A Unix socket, which no open() reads: ENXIO. */
  let socket: string;
  let server: Server;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ipallocator-files-'));
    file = join(dir, 'file');
    writeFileSync(file, 'x');
    socket = join(dir, 'socket');
    server = createServer();
    await new Promise<void>((done) => server.listen(socket, done));
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
    rmSync(dir, { recursive: true, force: true });
  });

  const notADirectory = () => `${JSON.stringify(file)}, a part of its path, is not a directory (ENOTDIR)`;

  it('--kubeconfig under a file (ENOTDIR), or a socket (ENXIO): the file, and why', async () => {
    const under = join(file, 'config');
    expect(await cli(['status', '--kubeconfig', under])).toEqual({
      code: 2,
      stdout: '',
      stderr: `ipallocator: cannot read the file --kubeconfig names (${JSON.stringify(under)}): ${notADirectory()}\n`,
    });
    expect(await cli(['check', '--kubeconfig', socket])).toEqual({
      code: 2,
      stdout: '',
      stderr: `ipallocator: cannot read the file --kubeconfig names (${JSON.stringify(socket)}): no such device or address (a socket, or a device without its driver) (ENXIO)\n`,
    });
  });

  it('--snapshot under a file (ENOTDIR), or a socket (ENXIO): the file, and why', async () => {
    const under = join(file, 'snapshot.json');
    expect(await cli(['map', '--snapshot', under])).toEqual({
      code: 2,
      stdout: '',
      stderr: `ipallocator: cannot read the file --snapshot names (${JSON.stringify(under)}): ${notADirectory()}\n`,
    });
    expect((await cli(['map', '--snapshot', socket])).stderr).toBe(
      `ipallocator: cannot read the file --snapshot names (${JSON.stringify(socket)}): no such device or address (a socket, or a device without its driver) (ENXIO)\n`,
    );
  });

  it('a file of $KUBECONFIG under a file (ENOTDIR): the file, and why', async () => {
    const under = join(file, 'config');
    const r = await withEnvironment({ KUBECONFIG: under }, () => cli(['status']));
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: `ipallocator: cannot read the default kubeconfig ($KUBECONFIG or ~/.kube/config): ${JSON.stringify(under)}: ${notADirectory()}\n`,
    });
  });

  // Permission is refused to another user than the owner: the command runs as nobody (65534)
  // when the tests run as root, whom no permission bit stops.
  const asRoot = process.getuid?.() === 0;
  /** The command run in a child process, as a user the file's mode refuses; `env` added to the environment. */
  function refusedRun(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const command = 'Deno' in globalThis ? ['run', '-A', 'cli/bin.ts', ...args] : ['--import', 'tsx', 'cli/bin.ts', ...args];
    const { KUBECONFIG: _, ...inherited } = process.env;
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        command,
        { cwd: ROOT, env: { ...inherited, NO_COLOR: '1', ...env }, ...(asRoot ? { uid: 65534, gid: 65534 } : {}) },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
      );
    });
  }

  it('a file without permission to read it (EACCES), named by --kubeconfig, --snapshot, $KUBECONFIG or as ~/.kube/config', async () => {
    const home = join(dir, 'home');
    mkdirSync(join(home, '.kube'), { recursive: true });
    const locked = join(home, '.kube', 'config');
    writeFileSync(locked, 'apiVersion: v1\n');
    chmodSync(locked, 0o000);
    // the folders open to all, so that only the file's own mode refuses
    for (const d of [dir, home, join(home, '.kube')]) chmodSync(d, 0o755);
    const denied = 'permission denied (EACCES)';
    const said = JSON.stringify(locked);
    const runs = await Promise.all([
      refusedRun(['status', '--kubeconfig', locked]),
      refusedRun(['map', '--snapshot', locked]),
      refusedRun(['status'], { KUBECONFIG: locked }),
      refusedRun(['status'], { HOME: home }),
    ]);
    expect(runs).toEqual([
      { code: 2, stdout: '', stderr: `ipallocator: cannot read the file --kubeconfig names (${said}): ${denied}\n` },
      { code: 2, stdout: '', stderr: `ipallocator: cannot read the file --snapshot names (${said}): ${denied}\n` },
      {
        code: 2,
        stdout: '',
        stderr: `ipallocator: cannot read the default kubeconfig ($KUBECONFIG or ~/.kube/config): ${said}: ${denied}\n`,
      },
      {
        code: 2,
        stdout: '',
        stderr: `ipallocator: cannot read the default kubeconfig ($KUBECONFIG or ~/.kube/config): ${said}: ${denied}\n`,
      },
    ]);
  });

  it('--out in a folder without permission to write (EACCES): the file, and why, and nothing written', async () => {
    const snapshot = join(dir, 'snapshot.json');
    writeFileSync(snapshot, JSON.stringify({ range: '10.0.0.0/30', data: '' }));
    chmodSync(snapshot, 0o644);
    const closed = join(dir, 'closed');
    mkdirSync(closed, { mode: 0o555 });
    chmodSync(closed, 0o555);
    const out = join(closed, 'map.svg');
    const r = await refusedRun(['map', '--snapshot', snapshot, '--out', out]);
    // worded as every file an option names is: the option, then the file in quotes
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: `ipallocator: cannot write the file --out names ("${out}"): permission denied (EACCES)\n`,
    });
    expect(existsSync(out)).toBe(false);
  });
});
