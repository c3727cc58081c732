// The hot paths stay compiled under Deno's V8, whose Maglev tier can deoptimize a function on
// every call when it speculates on a value the feedback never corrects (a deoptimization loop:
// compiled, thrown away, compiled again, each call paying for it). Counted with V8's own trace
// in a Deno child process, never timed. One case so far: the draw of a random start on an IPv6
// /64 (Math.clz32 of a word at or above 2^31, which Maglev checked to be an int32), met by a
// Range beside an Allocator on a /64, which made each Range.allocateNext 1.5–2× slower.
// Another: MemoryStore's NameTable.set, "wrong map" at its append to `entries` after every squeeze
// of an emptied table (Array.prototype.fill over the whole array turned it into an array of
// doubles again in Deno's V8), 3–56 times per run.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const DENO = join(ROOT, 'node_modules', '.bin', 'deno');

/**
 * How many times V8 deoptimized each function while `script` (TypeScript, run by Deno) ran, by
 * file and name: `name-table.ts set`.
 */
function deoptsPerFunction(script: string): Map<string, number> {
  const dir = mkdtempSync(join(tmpdir(), 'ipallocator-deopt-'));
  try {
    const file = join(dir, 'run.ts');
    writeFileSync(file, script);
    const trace = execFileSync(DENO, ['run', '-A', '--v8-flags=--trace-deopt,--trace-file-names', file], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      env: { ...process.env, NO_COLOR: '1' },
    });
    const counts = new Map<string, number>();
    // `deoptimizing 0x… <JSFunction set <file:///…/adapters/name-table.ts> (sfi = 0x…)>`
    for (const m of trace.matchAll(/deoptimizing \S+ <JSFunction ([^\s<(]*) ?(?:<([^>]*)>)?/g)) {
      const key = `${(m[2] ?? '').split('/').pop()} ${m[1] || '(anonymous)'}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return counts;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The functions deoptimized at least `times` times, with their counts. */
function loops(counts: Map<string, number>, times: number): Record<string, number> {
  return Object.fromEntries([...counts].filter(([, n]) => n >= times));
}

describe('no deoptimization loop under Deno', () => {
  it('a Range on an IPv6 /64 beside an Allocator on another /64: allocateNext + release is not deoptimized over and over', () => {
    const index = pathToFileURL(join(ROOT, 'adapters', 'index.ts')).href;
    const counts = deoptsPerFunction(`
      import { Allocator, MemoryStore, Range, seededRandom } from ${JSON.stringify(index)};
      const range = new Range('fd00::/64', { random: seededRandom(1) });
      const pairs = (n: number) => { for (let i = 0; i < n; i++) range.release(range.allocateNext()); };
      pairs(100_000);
      const alloc = new Allocator('fd01::/64', { store: new MemoryStore(), random: seededRandom(2) });
      for (let i = 0; i < 100_000; i++) await alloc.release(await alloc.allocateNext());
      pairs(500_000);
      range.destroy();
      alloc.destroy();
    `);
    expect(counts.size).toBeGreaterThan(0); // the trace was read: V8 deoptimizes something in any run
    // A loop is hundreds of deoptimizations here (drawBelow's was 268 in this script); a function
    // re-tiered while its feedback settles is deoptimized a few times (textOf 3–4).
    expect(loops(counts, 12)).toEqual({});
  });

  it("an Allocator over a MemoryStore: allocateNext + release does not deoptimize the store's name table over and over", () => {
    const index = pathToFileURL(join(ROOT, 'adapters', 'index.ts')).href;
    const counts = deoptsPerFunction(`
      import { Allocator, MemoryStore, seededRandom } from ${JSON.stringify(index)};
      const alloc = new Allocator('fd01::/64', { store: new MemoryStore(), random: seededRandom(2) });
      for (let i = 0; i < 20_000; i++) await alloc.release(await alloc.allocateNext());
      alloc.destroy();
    `);
    expect(counts.size).toBeGreaterThan(0);
    // every 16th create squeezes the emptied table: while that gave `entries` another map, set()
    // was deoptimized 5–10 times in this script ("wrong map"); since, none of the table's functions
    const nameTable = new Map([...counts].filter(([key]) => key.startsWith('name-table.ts ')));
    expect(loops(nameTable, 3)).toEqual({});
  });
});
