// MemoryStore and KubernetesStore implement one Store contract: given the same wrong input, they
// refuse it the same way — the same error class and the same message, but for the store's name.
// Each store holds one record, so an input that is only read while records are compared (once
// per record) is read here too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubernetesServiceCIDRs, KubernetesStore } from '../adapters/kubernetes/index.ts';
import { MemoryStore } from '../adapters/memory-store.ts';
import { InvalidArgumentError } from '../adapters/errors.ts';
import type { Store } from '../adapters/store.ts';
import { failure } from './helpers.ts';
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
    ['null', () => null, 'S.cache.list: labels must be a plain object of strings, got null'],
    ['a string', () => 'team=a', 'S.cache.list: labels must be a plain object of strings, got "team=a"'],
    ['an array', () => [['team', 'a']], 'S.cache.list: labels must be a plain object of strings, got an array of 1 value'],
    ['a label value that is a number', () => ({ team: 1 }), 'S.cache.list: the label "team" must be a string, got 1 (number)'],
    // neither would select anything by its entries or inherited keys: read as {}, they listed every record
    ['a Map', () => new Map([['team', 'a']]), 'S.cache.list: labels must be a plain object of strings, got '],
    [
      'an object whose labels are inherited',
      () => Object.create({ team: 'b' }),
      'S.cache.list: labels must be a plain object of strings, got ',
    ],
  ];

  for (const [row, input, says] of rows) {
    it.each(['MemoryStore', 'KubernetesStore'])(`%s: ${row}`, async (name) => {
      const { store } = stores.find((s) => s.name === name)!;
      const error = await failure(() => store.cache.list(input() as never));
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

describe('both stores refuse a record name that is not a string, with the same InvalidArgumentError', () => {
  const names: [string, () => unknown, string][] = [
    ['a number', () => 42, '42 (number)'],
    ['null', () => null, 'null'],
    ['undefined', () => undefined, 'undefined'],
    ['a revoked Proxy', revoked, 'a value of type object'],
  ];
  const calls: [string, (store: Store, name: never) => unknown][] = [
    ['get', (store, name) => store.get(name)],
    ['cache.get', (store, name) => store.cache.get(name)],
    ['delete', (store, name) => store.delete(name)],
  ];

  for (const [call, make] of calls) {
    for (const [row, input, quoted] of names) {
      it.each(['MemoryStore', 'KubernetesStore'])(`%s.${call}(${row})`, async (name) => {
        const { store } = stores.find((s) => s.name === name)!;
        const sent = d.requests.length;
        const error = await failure(() => make(store, input() as never));
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect((error as Error).message).toBe(`${name}.${call}: a record name must be a string, got ${quoted}`);
        expect(d.requests.length).toBe(sent); // refused before any request
      });
    }
  }

  it.each(['MemoryStore', 'KubernetesStore'])('%s: a name that is a string still reads as before', async (name) => {
    const { store } = stores.find((s) => s.name === name)!;
    expect((await store.get('10.0.0.1'))?.name).toBe('10.0.0.1');
    expect(store.cache.get('10.0.0.1')?.name).toBe('10.0.0.1');
    expect(await store.get('10.0.0.2')).toBeUndefined();
    expect(store.cache.get('10.0.0.2')).toBeUndefined();
  });

  it("KubernetesServiceCIDRs.get, whose cache is an informer as the store's, names itself", () => {
    const cidrs = new KubernetesServiceCIDRs(kubeConfigFor(d.url), { start: false });
    expect(() => cidrs.get(42 as never)).toThrow(
      new InvalidArgumentError('KubernetesServiceCIDRs.get: a record name must be a string, got 42 (number)'),
    );
    expect(cidrs.get('kubernetes')).toBeUndefined();
    cidrs.close();
  });
});
