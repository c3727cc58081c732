// fix() as a library call: an exception thrown by one of its callbacks stops it as a signal does,
// and is thrown only once the leaks under way have settled, never while deletes go on behind it.
import { describe, expect, it } from 'vitest';
import { type Finding, fix } from '../cli/check.ts';
import type { Cluster } from '../cli/cluster.ts';
import type { ListedIPAddress } from '../cli/listing.ts';

const MANAGED = { 'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io' };
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

/** A cluster of `n` leaked IPAddresses (their Service gone), each request answered after a tick. */
function leakedCluster(n: number) {
  const listed: ListedIPAddress[] = [...Array(n).keys()].map((i) => ({
    name: `10.96.0.${10 + i}`,
    labels: MANAGED,
    parentRef: { group: '', resource: 'services', namespace: 'default', name: 'gone' },
    uid: `uid-${i}`,
    creationTimestamp: '2020-01-01T00:00:00Z',
  }));
  const deleted: string[] = [];
  const cluster = {
    async readIPAddress(name: string) {
      await tick();
      return deleted.includes(name) ? undefined : listed.find((r) => r.name === name);
    },
    async readService() {
      await tick();
      return undefined;
    },
    async deleteIPAddress(name: string) {
      await tick();
      deleted.push(name);
      return 'deleted' as const;
    },
  } as unknown as Cluster;
  const findings: Finding[] = listed.map((r) => ({
    kind: 'orphan',
    ip: r.name,
    service: null,
    owner: 'default/gone',
    fix: 'delete',
    message: '',
    markedForDeletion: null,
  }));
  return { cluster, listed, findings, deleted };
}

describe('fix() with a callback that throws', () => {
  for (const callback of ['onDeleted', 'onProgress', 'onUnderWay'] as const) {
    it(`${callback} throwing: no further leak is started, and the exception comes once the leaks under way have settled`, async () => {
      const { cluster, listed, findings, deleted } = leakedCluster(40);
      let calls = 0;
      const broken = new Error(`${callback} broke`);
      const thrown = await fix(cluster, findings, {
        now: () => Date.now(),
        graceMs: 0,
        listed,
        [callback]: () => {
          if (++calls === 4) throw broken;
        },
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(thrown).toBe(broken);
      const deletedWhenThrown = deleted.length;
      for (let i = 0; i < 20; i++) await tick();
      expect(deleted.length).toBe(deletedWhenThrown);
      expect(deletedWhenThrown).toBeLessThan(listed.length);
    });
  }
});
