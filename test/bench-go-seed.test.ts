// The bench's Go re-typing of upstream's allocator (bench/go-seed/) gives the same answers as
// ReferenceAllocator (the TypeScript port of the same algorithm) on tiny ranges, so its rows time
// the algorithm they claim to. Random draws differ between the two (Go's math/rand against our
// seeded source), so the comparison is of what the algorithm guarantees: the same answers to has()
// and allocate(), allocateNext handing out every free address once — the dynamic (upper) band
// before the static (lower) one — then "range is full". Skipped, with the reason, without `go`.
import process from 'node:process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGoSeed, openGoSession, removeGoBuild, type GoSession, type GoVariant } from '../bench/go.ts';
import { offsetText, type RangeSpec } from '../bench/ranges.ts';
import { ReferenceAllocator } from '../adapters/reference-allocator.ts';
import { MemoryStore } from '../adapters/memory-store.ts';
import { labelsFor } from '../adapters/records.ts';
import { ErrAllocated, ErrFull, ErrNotInRange } from '../adapters/errors.ts';
import { seededRandom } from '../adapters/random.ts';
import { parseAddrInto } from '../adapters/address.ts';

const built = await buildGoSeed();
const skipWhy = built.binary ? undefined : built.why;
if (skipWhy) console.warn(`test/bench-go-seed.test.ts skipped: ${skipWhy}`);

/** The same error from either side, by kind. */
function kindOf(e: unknown): string {
  if (e === null || e === undefined) return 'ok';
  if (e instanceof ErrFull || e === 'range is full') return 'full';
  if (e instanceof ErrAllocated || e === 'provided IP is already allocated') return 'allocated';
  if (e instanceof ErrNotInRange || e === 'provided IP is not in the valid range') return 'not in range';
  return `other: ${e instanceof Error ? e.message : String(e)}`;
}

async function refKind(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return kindOf(e);
  }
}

/** A tiny range as bench/ranges.ts describes ranges (offset 0 = network + 1). */
function tiny(
  cidr: string,
  family: 'IPv4' | 'IPv6',
  network: [number, number, number, number],
  size: number,
  rangeOffset: number,
): RangeSpec {
  return {
    id: cidr,
    family,
    cidr,
    prefix: cidr.slice(cidr.indexOf('/')),
    prefixBits: Number(cidr.split('/')[1]),
    network,
    sizeHi: 0,
    sizeLo: size,
    size,
    rangeOffset,
    fillable: true,
  };
}

const CASES = [
  // size 30, dynamic band .17–.30, static band .1–.16
  { range: tiny('192.168.7.0/27', 'IPv4', [0, 0, 0, 0xc0a80700], 30, 16), outside: ['192.168.7.0', '192.168.7.31', '192.168.8.1'] },
  // size 63, dynamic band ::11–::3f, static band ::1–::10
  { range: tiny('fd00::/122', 'IPv6', [0xfd000000, 0, 0, 0], 63, 16), outside: ['fd00::', 'fd00::40', 'fd00:1::1'] },
];

describe.skipIf(skipWhy !== undefined)('go-seed agrees with ReferenceAllocator on tiny ranges', () => {
  afterAll(() => removeGoBuild());

  for (const { range, outside } of CASES) {
    for (const variant of ['go-seed', 'go-master'] as GoVariant[]) {
      describe(`${variant} on ${range.cidr}`, () => {
        let go: GoSession;
        let ref: ReferenceAllocator;
        const taken = Array.from({ length: range.size }, (_, i) => i).filter((i) => i % 3 === 1);
        const all = Array.from({ length: range.size }, (_, i) => offsetText(range, 0, i));
        const inUpper = (ip: string): boolean => all.indexOf(ip) >= range.rangeOffset;

        beforeAll(async () => {
          go = await openGoSession(range.cidr, 7);
          const pairs = new Uint32Array(2 * taken.length);
          taken.forEach((o, i) => (pairs[2 * i + 1] = o));
          await go.send('fill', pairs);
          const store = new MemoryStore();
          const labels = labelsFor(range.family);
          for (const o of taken) store.createSync({ name: offsetText(range, 0, o), labels, parentRef: null });
          ref = new ReferenceAllocator(range.cidr, { store, random: seededRandom(7) });
        });
        afterAll(() => {
          go?.close();
          ref?.destroy();
        });

        it('has() answers alike for every address of the range', async () => {
          for (const ip of all) {
            const r = await go.request(`trace ${variant} has ${ip}`);
            expect([ip, r.has]).toEqual([ip, await ref.has(ip)]);
          }
        });

        it('allocate() refuses a taken address and addresses outside the range alike', async () => {
          for (const ip of [offsetText(range, 0, taken[0]!), offsetText(range, 0, taken.at(-1)!), ...outside]) {
            const r = await go.request(`trace ${variant} allocate ${ip}`);
            const want = await refKind(ref.allocate(ip));
            expect([ip, kindOf(r.error)]).toEqual([ip, want]);
            expect(want).not.toBe('ok');
          }
          // a free address: taken by both, then released by both
          const free = offsetText(range, 0, 0);
          expect(kindOf((await go.request(`trace ${variant} allocate ${free}`)).error)).toBe('ok');
          await ref.allocate(free);
          expect((await go.request(`trace ${variant} has ${free}`)).has).toBe(true);
          await go.request(`trace ${variant} release ${free}`);
          await ref.release(free);
          expect((await go.request(`trace ${variant} has ${free}`)).has).toBe(false);
        });

        it('allocateNext hands out every free address once, dynamic band first, then "range is full"', async () => {
          const free = all.filter((_, i) => !taken.includes(i));
          const r = await go.request(`trace ${variant} next ${free.length + 1}`);
          const goIps = r.ips as string[];
          const refIps: string[] = [];
          let refEnd = 'ok';
          for (let i = 0; i <= free.length; i++) {
            try {
              refIps.push(await ref.allocateNext());
            } catch (e) {
              refEnd = kindOf(e);
              break;
            }
          }
          expect(kindOf(r.error)).toBe('full');
          expect(refEnd).toBe('full');
          expect([...goIps].sort()).toEqual([...free].sort());
          expect([...refIps].sort()).toEqual([...free].sort());
          const upper = free.filter(inUpper).length;
          expect(goIps.slice(0, upper).every(inUpper)).toBe(true);
          expect(refIps.slice(0, upper).every(inUpper)).toBe(true);
          // release everything handed out: both back to the fill
          for (const ip of goIps) await go.request(`trace ${variant} release ${ip}`);
          for (const ip of refIps) await ref.release(ip);
          for (const ip of free) expect((await go.request(`trace ${variant} has ${ip}`)).has).toBe(false);
        });
      });
    }
  }

  it('pins its timing thread to a CPU when asked (Linux), and refuses a CPU that does not exist', async () => {
    const s = await openGoSession('192.168.7.0/28', 1);
    try {
      if (process.platform === 'linux') await expect(s.request('pin 0')).resolves.toMatchObject({ ok: true });
      else await expect(s.request('pin 0')).rejects.toThrow(/only supported on Linux/);
      await expect(s.request('pin 100000')).rejects.toThrow(/no CPU 100000|only supported on Linux/);
      await expect(s.request('pin x')).rejects.toThrow(/invalid syntax/);
      // still answering after the refusals
      expect(((await s.request('trace go-seed next 3')).ips as string[]).length).toBe(3);
    } finally {
      s.close();
    }
  });

  it("on a /64, go-master draws inside the range; go-seed, as upstream's file did, also outside it", async () => {
    const s = await openGoSession('2001:db8::/64', 3);
    try {
      const w = new Uint32Array(4);
      const inside = (ip: string): boolean => {
        parseAddrInto(ip, w);
        return w[0] === 0x20010db8 && w[1] === 0;
      };
      const master = (await s.request('trace go-master next 64')).ips as string[];
      const seed = (await s.request('trace go-seed next 64')).ips as string[];
      expect(master.length).toBe(64);
      expect(master.every(inside)).toBe(true);
      expect(seed.length).toBe(64);
      expect(seed.some((ip) => !inside(ip))).toBe(true);
    } finally {
      s.close();
    }
  });
});
