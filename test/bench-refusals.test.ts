// The bench scripts (npm run bench, npm run bench:strategies) used the way a newcomer does: an
// output path that cannot be written, a --filter that names no case, a strategy of your own that
// fails at its first choice. Each is refused in one line, exit 2, before anything is measured or
// simulated; no test asserts a timing.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url);

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a bench script under tsx from the checkout; its exit code, standard output and error. */
function script(path: string, args: readonly string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', path, ...args], { cwd: root, timeout: 90_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
    });
  });
}

/** `text` matched literally inside a RegExp (a temporary path may hold `.`, `+`, …). */
const literal = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bench-refusals-'));
  writeFileSync(join(dir, 'a-file'), '');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// One case of the quick grid, a few seconds: what runs before an unwritable --out is found.
const ONE_CASE = ['--smoke', '--filter', '^core IPv4 /16 allocateNext\\+release 0 %$'];

// Both Go columns on the full grid's IPv4 /16: 24 cases, each sampled for a fixed time (about a
// second here), so that after the first case's line about 20 s of work is left, however loaded the
// machine: a signal sent then interrupts the run, never lands after its end.
const GO_CASES = ['--filter', '^go-(seed|master) IPv4 /16 '];

describe('--out that cannot be written is refused before the run', () => {
  // Regression: both scripts ran to the end (a full run: minutes), then failed on mkdir or write
  // with a stack trace, every result lost.
  it.each([
    ['under a file', () => join(dir, 'a-file', 'results'), /--out .*a-file\/results: cannot write there: /],
    [
      'ending in a slash',
      () => `${join(dir, 'not-yet')}/`,
      /--out .*not-yet\/ names a directory: give a path prefix, such as .*not-yet\/results /,
    ],
  ])(
    '%s: npm run bench and npm run bench:strategies exit 2 with one line',
    async (_name, out, message) => {
      const before = readdirSync(dir).sort();
      const bench = await script('bench/run.ts', [...ONE_CASE, '--out', out()]);
      expect(bench.code).toBe(2);
      expect(bench.stdout).toBe('');
      expect(bench.stderr).toMatch(new RegExp(`^bench: ${message.source}[^\\n]*\\n$`));
      const strategies = await script('bench/strategies/run.ts', ['--quick', '--out', out()]);
      expect(strategies.code).toBe(2);
      expect(strategies.stderr).toMatch(new RegExp(`^bench:strategies: ${message.source}[^\\n]*\\n$`));
      expect(readdirSync(dir).sort()).toEqual(before);
    },
    200_000,
  );
});

describe('npm run bench: a --filter that names no case', () => {
  // Regression: it ran nothing and wrote an empty table over the mode's last results ("IPv4 /24"
  // is in the full grid only; the quick grid has no /24).
  it('is refused with one line saying what the case names look like, nothing written', async () => {
    const out = join(dir, 'nothing');
    const result = await script('bench/run.ts', ['--quick', '--filter', 'IPv4 /24', '--out', out]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^bench: --filter IPv4 \/24 matches no case of the quick grid \(case names look like "allocator IPv4 \/16 [^\n]*\n$/,
    );
    expect(readdirSync(dir).filter((f) => f.startsWith('nothing'))).toEqual([]);
  }, 100_000);
});

describe('npm run bench:strategies: a strategy of your own that fails at its first choices', () => {
  // Regression: taken as a Range accepts it when made, it ran until the simulator first asked it,
  // then ended the run with a stack trace. Choosing one address twice shows at the second call.
  it.each([
    ['answers something not a boolean', 'choose() { return 1; }', /got 1 \(number\)/],
    ['chooses a taken offset', 'choose(out) { out.hi = 0; out.lo = view.rangeOffset; return true; }', /chose offset \d+, which is taken/],
    ['throws', "choose() { throw new Error('no choice'); }", /no choice/],
  ])(
    '%s: exit 2 and one line naming it, nothing simulated',
    async (_name, chooser, message) => {
      const file = join(dir, `first-choice-${_name.replace(/\W+/g, '-')}.mjs`);
      writeFileSync(file, `export default { name: 'mine', forRange(view) { return { ${chooser} }; } };\n`);
      const result = await script('bench/strategies/run.ts', ['--quick', '--strategy', file, '--out', join(dir, 's')]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        new RegExp(
          `^bench:strategies: --strategy ${literal(file)}: 'mine' fails a trial of two allocateNext calls on 10\\.96\\.0\\.0/24: [^\\n]*${message.source}[^\\n]*\\n$`,
        ),
      );
      expect(readdirSync(dir).filter((f) => f.startsWith('s'))).toEqual([]);
    },
    100_000,
  );
});

const hasGo = (() => {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * Runs bench/run.ts and sends SIGINT after `after` shows on stderr: to the process alone, or to the
 * process group of its own it runs in, as a terminal's Ctrl-C does (its child processes get it too).
 */
async function interrupted(
  args: readonly string[],
  after: RegExp,
  tmp: string,
  to: 'process' | 'group',
): Promise<Outcome & { signalled: boolean }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args], {
    cwd: root,
    detached: to === 'group',
    env: { ...process.env, TMPDIR: tmp, GOCACHE: process.env.GOCACHE ?? join(tmpdir(), 'ipallocator-go-cache') },
  });
  let stdout = '';
  let stderr = '';
  let signalled = false;
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (!signalled && after.test(stderr)) {
        signalled = true;
        if (to === 'group') process.kill(-child.pid!, 'SIGINT');
        else child.kill('SIGINT');
      }
    });
    // Deno's child_process tells an exit status of 128 + n as a death by signal n
    child.on('exit', (c, sig) => resolve(c ?? ('Deno' in globalThis && sig === 'SIGINT' ? 130 : null)));
  });
  return { code, stdout, stderr, signalled };
}

/** Stops a run with SIGINT after `after`: it says so, exits 130, writes and leaves nothing. */
async function stopsCleanly(args: readonly string[], after: RegExp, to: 'process' | 'group'): Promise<void> {
  const tmp = mkdtempSync(join(tmpdir(), 'bench-interrupted-tmp-'));
  const out = join(dir, 'interrupted');
  try {
    const result = await interrupted([...args, '--out', out], after, tmp, to);
    expect(result.signalled).toBe(true);
    expect(result.stderr).not.toContain('bench failed');
    expect(result.stderr).toMatch(/\nbench: stopped by SIGINT; no results written\n$/);
    expect(result.code).toBe(130);
    expect(readdirSync(tmp).filter((f) => f.startsWith('ipallocator-') && f !== 'ipallocator-go-cache')).toEqual([]);
    expect(readdirSync(dir).filter((f) => f.startsWith('interrupted'))).toEqual([]);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

describe('npm run bench: stopped with Ctrl-C', () => {
  // Regression: Node's default for SIGINT ends the process without its 'exit' handlers, so the
  // Go program's build, its fill files and a --baseline's exported tree stayed in the temporary
  // directory after each interrupted run.
  it.skipIf(!hasGo)(
    'removes its temporary directories, writes nothing, exits 130',
    async () => {
      // the first case timed: the Go program is built and its session open, with its fill directory
      await stopsCleanly(GO_CASES, /\[1\/\d+\]/, 'process');
    },
    120_000,
  );
});

describe('npm run bench: a --baseline that is no commit', () => {
  // Regression: found after the Go program was built, and told as "bench failed:" with a stack
  // trace, exit 1.
  it('is refused with one line, exit 2, before anything is built', async () => {
    const result = await script('bench/run.ts', [...ONE_CASE, '--baseline', 'no-such-ref', '--out', join(dir, 'baseline')]);
    expect(result).toEqual({ code: 2, stdout: '', stderr: 'bench: --baseline no-such-ref: not a commit in this repository\n' });
  }, 100_000);
});

describe('npm run bench:strategies: a strategy of your own that fails later in the run', () => {
  // Regression: past the trial before the run, its error ended the run in a stack trace that
  // named neither the module nor the workload.
  it('ends the run with one line naming the module, the strategy and the workload, nothing written', async () => {
    const file = join(dir, 'fails-later.mjs');
    writeFileSync(
      file,
      `export default { name: 'later', forRange(view) { let n = 0; return { choose(out) {
        if (++n > 50) throw new Error('gave up after 50');
        if (!view.index.nextFree(0, view.rangeOffset, 0, view.rangeOffset, view.sizeHi, view.sizeLo - 1)) return false;
        out.hi = view.index.resultHi; out.lo = view.index.resultLo; return true;
      } }; } };\n`,
    );
    const result = await script('bench/strategies/run.ts', ['--quick', '--strategy', file, '--out', join(dir, 'later')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(`\\nbench:strategies: --strategy ${literal(file)}: 'later' failed on the workload 'load 0\\.5': gave up after 50\\n$`),
    );
    expect(readdirSync(dir).filter((f) => f.startsWith('later'))).toEqual([]);
  }, 100_000);
});

describe('npm run bench: Ctrl-C at a terminal, which signals its child processes too', () => {
  // Regression: the terminal sends SIGINT to the whole process group. A child it ended first (a
  // --baseline's WASM build, the Go program mid-case) failed the run as "bench failed:" with a
  // stack trace, exit 1, instead of stopping it.

  it("during a --baseline's WASM build: stopped by SIGINT, exit 130, nothing written or left behind", async () => {
    await stopsCleanly([...ONE_CASE, '--baseline', 'HEAD'], /building its WASM core\n/, 'group');
  }, 120_000);

  it.skipIf(!hasGo)(
    'while the Go program times a case: stopped by SIGINT, exit 130, nothing written or left behind',
    async () => {
      await stopsCleanly(GO_CASES, /\[1\/\d+\]/, 'group');
    },
    120_000,
  );
});

describe('a refused run makes no directory for its --out', () => {
  // Regression: the check that --out can be written made its directories, so a run refused
  // afterwards (a --filter naming no case, a --baseline naming no commit) left them behind.
  it.each([
    ['npm run bench, a --filter naming no case', 'bench/run.ts', ['--quick', '--filter', 'IPv4 /24']],
    ['npm run bench, a --baseline naming no commit', 'bench/run.ts', [...ONE_CASE, '--baseline', 'no-such-ref']],
    ['npm run bench:strategies, a --strategy it cannot import', 'bench/strategies/run.ts', ['--quick', '--strategy', 'no-such-module.mjs']],
  ])(
    '%s',
    async (name, path, args) => {
      const top = `made-${name.replace(/\W+/g, '-')}`;
      const result = await script(path, [...args, '--out', join(dir, top, 'deeper', 'results')]);
      expect(result.code).toBe(2);
      expect(readdirSync(dir).filter((f) => f === top)).toEqual([]);
    },
    100_000,
  );
});
