// npm run bench:strategies with a strategy of your own that finds nothing it would choose in an
// IPv6 range (allocateNext answers ErrFull there), which the trial before the run allows: the run
// must end in a report, or in one line naming the module and the strategy, never in an uncaught
// error after the simulations have run.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'bench-own-full-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('bench:strategies: a strategy of your own that answers ErrFull on IPv6', () => {
  it('ends in a report, or in one line naming it', async () => {
    const file = join(dir, 'v4only.mjs');
    writeFileSync(
      file,
      `export default { name: 'v4only', forRange(view) { return { choose(out) {
        if (view.sizeHi > 0) return false;
        if (!view.index.nextFree(0, view.rangeOffset, 0, view.rangeOffset, view.sizeHi, view.sizeLo - 1)) return false;
        out.hi = view.index.resultHi; out.lo = view.index.resultLo; return true;
      } }; } };\n`,
    );
    const out = join(dir, 'run');
    const result = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'bench/strategies/run.ts', '--quick', '--strategy', file, '--out', out],
        { cwd: new URL('..', import.meta.url), timeout: 200_000 },
        (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stderr }),
      );
    });
    expect(result.stderr).not.toContain('triggerUncaughtException');
    if (result.code === 0) {
      expect(readdirSync(dir).filter((f) => f.startsWith('run'))).not.toEqual([]);
    } else {
      const last = result.stderr.trimEnd().split('\n').at(-1);
      expect(last).toMatch(/^bench:strategies: --strategy .*v4only\.mjs: 'v4only' /);
    }
  }, 220_000);
});
