// A DualStackAllocator's rollback on a store that fails every delete and every read: the address
// it could not give back must be reported as one that may still be allocated, with the delete's
// error, not only as the failed read of its check.
import { describe, expect, it } from 'vitest';
import { Allocator, DualStackAllocator, type IPAddressRecord, MemoryStore, type Store, StillAllocatedError } from '../adapters/index.ts';

/** A MemoryStore behind a store without `sync`, whose IPv6 creates, deletes and reads fail. */
function failingStore(inner: MemoryStore, errors: { create: Error; delete: Error; get: Error }): Store {
  return {
    async create(record: IPAddressRecord) {
      if (record.name.includes(':')) throw errors.create;
      return inner.create(record);
    },
    async delete() {
      throw errors.delete;
    },
    async get() {
      throw errors.get;
    },
    get cache() {
      return inner.cache;
    },
    close() {},
  };
}

describe('DualStackAllocator rollback when the delete and the check both fail', () => {
  for (const call of ['allocateNext', 'allocate'] as const) {
    it(`${call}: reports the IPv4 address as one that may still be allocated, the delete's error its cause, the check's its checkError`, async () => {
      const inner = new MemoryStore();
      const errors = { create: new Error('IPv6 create refused'), delete: new Error('delete failed'), get: new Error('read failed') };
      const store = failingStore(inner, errors);
      const reports: [unknown, string, string][] = [];
      const pair = new DualStackAllocator(new Allocator('10.0.0.0/28', { store }), new Allocator('fd00::/120', { store }), {
        onRollbackError: (error, ip, family) => reports.push([error, ip, family]),
      });
      const outcome = call === 'allocateNext' ? pair.allocateNext(null, ['IPv4', 'IPv6']) : pair.allocate(['10.0.0.5', 'fd00::5']);
      await expect(outcome).rejects.toBe(errors.create);
      const left = inner.records().map((r) => r.name);
      expect(left).toHaveLength(1); // the IPv4 record, whose delete failed
      expect(reports).toHaveLength(1);
      const [error, ip, family] = reports[0]!;
      expect([ip, family]).toEqual([left[0], 'IPv4']);
      expect(error).toBeInstanceOf(StillAllocatedError);
      expect((error as StillAllocatedError).cause).toBe(errors.delete);
      expect((error as StillAllocatedError).checkError).toBe(errors.get);
      expect((error as Error).message).toBe(
        `${left[0]} may still be allocated after the rollback released it: its delete failed, and checking failed too (read failed; the delete's error is this error's cause, the check's its checkError)`,
      );
      pair.destroy();
    });
  }
});

describe('DualStackAllocator rollback when the delete fails but may have taken effect, and the check fails', () => {
  // A delete whose answer was lost (a timeout) may have removed the record; with the check failing
  // too, nothing tells whether the address is still allocated: the report must not say it is, and
  // must not lose the check's error.
  it('does not report the address as still allocated when its record is gone, and keeps the check error', async () => {
    const inner = new MemoryStore();
    const errors = { create: new Error('IPv6 create refused'), delete: new Error('delete timed out'), get: new Error('read failed') };
    const store: Store = {
      ...failingStore(inner, errors),
      async delete(name: string) {
        await inner.delete(name); // taken effect, answer lost
        throw errors.delete;
      },
    };
    const reports: unknown[] = [];
    const pair = new DualStackAllocator(new Allocator('10.0.0.0/28', { store }), new Allocator('fd00::/120', { store }), {
      onRollbackError: (error) => reports.push(error),
    });
    await expect(pair.allocateNext(null, ['IPv4', 'IPv6'])).rejects.toBe(errors.create);
    expect(inner.records()).toEqual([]); // nothing is allocated
    expect(reports).toHaveLength(1);
    const message = String((reports[0] as Error).message);
    expect(message).not.toMatch(/ is still allocated /);
    expect(message).toContain('read failed');
    expect(reports[0]).toBeInstanceOf(StillAllocatedError);
    expect(reports[0]).toMatchObject({ cause: errors.delete, checkError: errors.get });
    pair.destroy();
  });
});
