// MemoryStore and KubernetesStore implement one Store contract: given the same wrong input, they
// refuse it the same way — the same error class and the same message, but for the store's name.
// Each store holds one record, so an input that is only read while records are compared (once
// per record) is read here too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubernetesStore } from '../adapters/kubernetes/index.ts';
import { MemoryStore } from '../adapters/memory-store.ts';
import { InvalidArgumentError } from '../adapters/errors.ts';
import type { Store } from '../adapters/store.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { kubeConfigFor } from './k8s/kubeconfig.ts';

const OWNER = { group: '', resource: 'services', namespace: 'default', name: 'web' };
const LABELS = { team: 'a' };

/** A revoked Proxy: every read of it (a property, Array.isArray, Object.keys) throws TypeError. */
function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

/** `fields` with the enumerable own `key` a getter that throws. */
function throwingAt<T extends object>(fields: T, key: PropertyKey): T {
  return Object.defineProperty(fields, key, {
    enumerable: true,
    get() {
      throw new Error('getter failed');
    },
  });
}

/** What `call` threw (or its promise rejected with); fails when it succeeds. */
async function thrownBy(call: () => unknown): Promise<unknown> {
  try {
    await call();
  } catch (e) {
    return e;
  }
  throw new Error('nothing was thrown');
}

let d: ApiServerDouble;
const stores: { name: 'MemoryStore' | 'KubernetesStore'; store: Store }[] = [];

beforeAll(async () => {
  const memory = new MemoryStore();
  memory.createSync({ name: '10.0.0.1', labels: LABELS, parentRef: OWNER });
  d = await ApiServerDouble.start();
  d.insert({ metadata: { name: '10.0.0.1', labels: LABELS }, spec: { parentRef: OWNER } });
  const kubernetes = new KubernetesStore(kubeConfigFor(d.url));
  await kubernetes.waitForSync();
  stores.push({ name: 'MemoryStore', store: memory }, { name: 'KubernetesStore', store: kubernetes });
});

afterAll(async () => {
  for (const { store } of stores.splice(0)) store.close();
  await d.close();
});

describe('both stores refuse what cache.list cannot read as labels, with the same InvalidArgumentError', () => {
  // `S` in a message stands for the store's name.
  const rows: [string, () => unknown, string][] = [
    ['a revoked Proxy', revoked, 'S.cache.list labels could not be read: it threw TypeError: '],
    [
      'labels with a getter that throws',
      () => throwingAt({ ...LABELS }, 'tier'),
      'S.cache.list labels.tier could not be read: it threw Error: getter failed',
    ],
    ['null', () => null, 'S.cache.list: labels must be an object of strings, got null'],
    ['a string', () => 'team=a', 'S.cache.list: labels must be an object of strings, got "team=a"'],
    ['an array', () => [['team', 'a']], 'S.cache.list: labels must be an object of strings, got an array of 1 value'],
    ['a label value that is a number', () => ({ team: 1 }), 'S.cache.list: the label "team" must be a string, got 1 (number)'],
  ];

  for (const [row, input, says] of rows) {
    it.each(['MemoryStore', 'KubernetesStore'])(`%s: ${row}`, async (name) => {
      const { store } = stores.find((s) => s.name === name)!;
      const error = await thrownBy(() => store.cache.list(input() as never));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      const expected = says.replace('S.', `${name}.`);
      expect((error as Error).message.slice(0, expected.length)).toBe(expected);
    });
  }

  it.each(['MemoryStore', 'KubernetesStore'])('%s: list(), list(undefined) and list({}) list every record; labels select', (name) => {
    const { store } = stores.find((s) => s.name === name)!;
    for (const all of [store.cache.list(), store.cache.list(undefined), store.cache.list({})]) {
      expect(all.map((r) => r.name)).toEqual(['10.0.0.1']);
    }
    expect(store.cache.list({ team: 'a' }).map((r) => r.name)).toEqual(['10.0.0.1']);
    expect(store.cache.list({ team: 'b' })).toEqual([]);
  });
});
