// `map --out` under Deno with fewer permissions than -A: Deno refuses the look at the folder
// (`--allow-read`), which the command read as "the folder does not exist".
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Range } from '../adapters/index.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DENO = join(ROOT, 'node_modules', '.bin', 'deno');

type Run = { code: number | null; stdout: string; stderr: string };

const mapUnderDeno = (permissions: string[], args: string[]) =>
  new Promise<Run>((done) => {
    execFile(
      DENO,
      ['run', ...permissions, 'cli/bin.ts', 'map', ...args],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => done({ code: err === null ? 0 : ((err as { code?: number }).code ?? null), stdout, stderr }),
    );
  });

describe('map --out under Deno without permission to look at the folder', () => {
  let dir: string;
  let snapshot: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ipallocator-deno-out-'));
    snapshot = join(dir, 'range.json');
    const r = new Range('10.96.0.0/24');
    r.allocateMany(10);
    const snap = r.snapshot();
    writeFileSync(snapshot, JSON.stringify({ ...snap, data: Buffer.from(snap.data).toString('base64') }));
    r.destroy();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('with write permission but no read permission for the folder: writes the SVG, exit 0', async () => {
    const out = join(dir, 'granted.svg');
    const r = await mapUnderDeno([`--allow-read=${snapshot}`, `--allow-write=${out}`], ['--snapshot', snapshot, '--out', out]);
    expect(r.stderr).not.toContain('does not exist');
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toBe(`wrote ${JSON.stringify(out)}: 10.96.0.0/24, 256 cells of 1 address; 10 of 254 addresses allocated\n`);
    expect(existsSync(out)).toBe(true);
  });

  it('with no permission at all: names the permission Deno refused, not a folder that does not exist, exit 2', async () => {
    const out = join(dir, 'denied.svg');
    const r = await mapUnderDeno([], ['--snapshot', snapshot, '--out', out]);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).not.toContain('does not exist');
    expect(r.stderr).toMatch(/--allow-(read|write) flag\n$/);
    expect(existsSync(out)).toBe(false);
  });
});
