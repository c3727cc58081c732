// Differential fuzzing: the regression rows and the seeded fuzz cases of differential.ts
// (Allocator ≡ ReferenceAllocator ≡ Range set semantics; Range ≡ Set model), 10 prefixes.
// IPALLOCATOR_FUZZ_OPS operations per case (default 10,000 ⇒ 2 × 10^5 per run).
import { describe, expect, it } from 'vitest';
import { Driver, FUZZ_OPS, baseSeed, report, scaledTimeout, shrink } from './driver.ts';

const TIMEOUT = scaledTimeout(FUZZ_OPS, 10_000);
import { bigGeometry } from './addresses.ts';
import { PREFIXES, REGRESSIONS, generate, replayAllocators, replayRange } from './differential.ts';

// ── tests ───────────────────────────────────────────────────────────────────────────────────

const SEED = baseSeed(0x5eed_d1ff);
let total = 0;

describe('differential regression rows', () => {
  it.each(REGRESSIONS.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    const m = row.suite === 'allocators' ? await replayAllocators(row.cidr, row.seed, row.ops) : replayRange(row.cidr, row.seed, row.ops);
    expect(m).toBeNull();
  });
});

describe(`differential fuzzing, ${FUZZ_OPS} operations per prefix (IPALLOCATOR_FUZZ_OPS)`, () => {
  describe.each(PREFIXES.map((c, i) => [c, i] as const))('%s', (cidr, i) => {
    const count = (() => {
      const g = bigGeometry(cidr);
      return g.last - g.first + 1n;
    })();

    it(
      'Allocator ≡ ReferenceAllocator ≡ Range (set semantics)',
      async () => {
        const seed = (SEED + i * 7919) >>> 0;
        const ops = generate(new Driver(seed), FUZZ_OPS, count, false);
        const m = await replayAllocators(cidr, seed, ops);
        if (m !== null) {
          const shrunk = await shrink(ops, (o) => replayAllocators(cidr, seed, o), 300);
          expect.fail(report(`Allocator ≡ ReferenceAllocator on ${cidr}`, seed, m, shrunk));
        }
        total += ops.length;
      },
      TIMEOUT,
    );

    it(
      'Range ≡ Set model (allocateNext, allocateMany, releaseMany, snapshot)',
      async () => {
        const seed = (SEED + i * 104729 + 1) >>> 0;
        const ops = generate(new Driver(seed), FUZZ_OPS, count, true);
        const m = replayRange(cidr, seed, ops);
        if (m !== null) {
          const shrunk = await shrink(ops, (o) => replayRange(cidr, seed, o), 1000);
          expect.fail(report(`Range ≡ model on ${cidr}`, seed, m, shrunk));
        }
        total += ops.length;
      },
      TIMEOUT,
    );
  });

  it('reports the operations fuzzed', () => {
    console.log(`[reliability] differential: ${total} operations fuzzed (seed ${SEED})`);
    expect(total).toBeGreaterThan(0);
  });
});
