// An unquoted date in a kubeconfig (`name: 2024-01-01`, `args: [--since, 2024-01-01]`, a token, an
// env value) is text to kubectl (client-go decodes YAML through yaml.v2, which gives a timestamp as
// the text written) and to client-node 2.x (js-yaml 5), and a Date to client-node 1.x (js-yaml 4).
// Regression: with 1.x the loader refused such a file, saying the value "is read by YAML as a
// mapping, not as text, which kubectl cannot read either" — it is a date, and kubectl reads it; a
// KubeConfig loaded by client-node 1.x itself was refused the same way. Each case runs with both
// majors: the loader's own parse (loadAllYaml) swapped for 1.x's where 1.x loads the file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as clientNode from '@kubernetes/client-node';
import { KubeConfig as KubeConfig1, loadAllYaml as loadAllYaml1 } from 'client-node-1';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InvalidArgumentError } from '../adapters/errors.ts';
import { loadKubeconfigText } from '../adapters/kubernetes/config.ts';
import { impersonationHeaders } from '../adapters/kubernetes/impersonation.ts';
import { KubernetesStore } from '../adapters/kubernetes/index.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';

vi.mock('@kubernetes/client-node', async (importOriginal) => {
  const original = await importOriginal<typeof import('@kubernetes/client-node')>();
  return { ...original, loadAllYaml: vi.fn(original.loadAllYaml) };
});

const { KubeConfig } = clientNode;
const loadAllYaml2 = vi.mocked(clientNode.loadAllYaml).getMockImplementation()!;

/** Each major: its KubeConfig, and its YAML reader put in place of the loader's own parse. */
const MAJORS: [major: string, Kc: typeof KubeConfig, parse: typeof clientNode.loadAllYaml][] = [
  ['1.x', KubeConfig1 as unknown as typeof KubeConfig, loadAllYaml1 as typeof clientNode.loadAllYaml],
  ['2.x', KubeConfig, loadAllYaml2],
];

/** A kubeconfig of dates, unquoted: names, a namespace, a token, an exec entry's args and env value. */
function datesText(server: string, plugin: string, user = '{token: 2024-01-02T03:04:05Z, as: alice}'): string {
  return (
    `apiVersion: v1\nkind: Config\nclusters:\n- name: 2024-01-01\n  cluster: {server: "${server}", insecure-skip-tls-verify: true}\n` +
    `users:\n- name: u\n  user: ${user}\n- name: e\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n` +
    `      command: ${JSON.stringify(process.execPath)}\n      args: [${JSON.stringify(plugin)}, --since, 2024-01-03, 2001-12-14 21:59:43.10 -5]\n` +
    '      env: [{name: SINCE, value: 2024-01-04 10:00:00}]\n' +
    'contexts:\n- name: ctx\n  context: {cluster: 2024-01-01, user: u, namespace: 2024-01-05}\n' +
    '- name: 2024-01-06\n  context: {cluster: 2024-01-01, user: e}\ncurrent-context: ctx\n'
  );
}

/** An exec plugin whose token is its args and its env's SINCE, joined by `|`. */
const PLUGIN =
  'const token = [...process.argv.slice(2), process.env.SINCE].join("|");\n' +
  'console.log(JSON.stringify({apiVersion: "client.authentication.k8s.io/v1beta1", kind: "ExecCredential", status: {token}}));\n';

describe('an unquoted date in a kubeconfig', () => {
  let double: ApiServerDouble;
  let folder: string;
  let plugin: string;
  beforeEach(async () => {
    double = await ApiServerDouble.start({ tls: true }); // the token is sent: over https, as kubectl sends it
    folder = mkdtempSync(join(tmpdir(), 'ipallocator-yaml-dates-'));
    plugin = join(folder, 'plugin.mjs');
    writeFileSync(plugin, PLUGIN);
    vi.mocked(clientNode.loadAllYaml).mockClear();
  });
  afterEach(async () => {
    vi.mocked(clientNode.loadAllYaml).mockImplementation(loadAllYaml2);
    await double.close();
    rmSync(folder, { recursive: true, force: true });
  });

  /** `text` loaded by the loader with client-node `major`'s KubeConfig and YAML reader. */
  function load(major: (typeof MAJORS)[number], text: string): clientNode.KubeConfig {
    const [, Kc, parse] = major;
    vi.mocked(clientNode.loadAllYaml).mockImplementation(parse);
    const kc = new Kc();
    loadKubeconfigText(kc, text, join(folder, 'config'));
    return kc;
  }

  /** The Authorization headers a store of `kc`, in context `context`, sends for one get. */
  async function sent(kc: clientNode.KubeConfig, context: string): Promise<(string | undefined)[]> {
    kc.setCurrentContext(context);
    const store = new KubernetesStore(kc, { start: false });
    try {
      await store.get('10.0.0.1');
    } finally {
      store.close();
    }
    return double.requests.map((r) => r.authorization);
  }

  it.each(MAJORS)('is read as the text written, as kubectl reads it, and so sent (client-node %s)', async (...major) => {
    const kc = load(major, datesText(double.url, plugin));
    expect(kc.clusters.map((c) => c.name)).toEqual(['2024-01-01']);
    expect(kc.contexts.map((c) => [c.name, c.cluster, c.namespace])).toEqual([
      ['ctx', '2024-01-01', '2024-01-05'],
      ['2024-01-06', '2024-01-01', undefined],
    ]);
    expect(kc.users[0]?.token).toBe('2024-01-02T03:04:05Z');
    // the loader parsed nothing itself: client-node's reading was enough
    expect(clientNode.loadAllYaml).not.toHaveBeenCalled();
    expect(await sent(kc, 'ctx')).toEqual(['Bearer 2024-01-02T03:04:05Z']);
    double.requests.length = 0;
    expect(await sent(kc, '2024-01-06')).toEqual([`Bearer --since|2024-01-03|2001-12-14 21:59:43.10 -5|2024-01-04 10:00:00`]);
  });

  it.each(MAJORS)(
    'in a kubeconfig the loader parses too (a token-file, as-groups) is read once, as the text written (client-node %s)',
    (...major) => {
      writeFileSync(join(folder, '2024-01-07'), 'from-the-file\n');
      const text = datesText(double.url, plugin, '{token-file: 2024-01-07, as: alice, as-groups: [2024-01-08]}');
      const kc = load(major, text);
      expect(kc.users[0]?.token).toBe('from-the-file');
      expect(impersonationHeaders(kc.users[0]!)).toEqual([['Impersonate-Group', '2024-01-08']]);
      expect(kc.clusters.map((c) => c.name)).toEqual(['2024-01-01']);
      expect(kc.users[1]?.exec?.args).toEqual([plugin, '--since', '2024-01-03', '2001-12-14 21:59:43.10 -5']);
      expect(kc.users[1]?.exec?.env).toEqual([{ name: 'SINCE', value: '2024-01-04 10:00:00' }]);
      expect(clientNode.loadAllYaml).toHaveBeenCalledTimes(1);
    },
  );

  // 2024-01-01 and 2024-01-01T00:00:00Z are one Date: which of them the token was cannot be told
  const said =
    'is a date, not text, to the YAML reader of @kubernetes/client-node 1.x (js-yaml 4), which reads an unquoted 2024-01-01 or ' +
    '2024-01-01T10:00:00Z as a date; the text written cannot be told from the file, where no one spelling reads as that date ' +
    '(what it holds is not shown): quote it in the kubeconfig ("2024-01-01", not 2024-01-01), as kubectl and client-node 2.x read it as text';
  it.each([
    ['a token', '{token: 2024-01-01T00:00:00Z}'],
    ['a token-file the loader parses the file for', '{token-file: 2024-01-01T00:00:00Z}'],
  ])('spelled two ways in the file is refused with client-node 1.x, naming the field, and read as text with 2.x (%s)', (_name, user) => {
    writeFileSync(join(folder, '2024-01-01T00:00:00Z'), 'from-the-file');
    const text = datesText(double.url, plugin, user);
    expect(() => load(MAJORS[0]!, text)).toThrow(`the clusters[0].name ${said}`);
    const kc = load(MAJORS[1]!, text);
    expect([kc.clusters[0]?.name, kc.users[0]?.token]).toEqual([
      '2024-01-01',
      user.startsWith('{token:') ? '2024-01-01T00:00:00Z' : 'from-the-file',
    ]);
  });

  it('in a KubeConfig client-node 1.x loaded itself is refused, naming the field; one 2.x loaded is taken', async () => {
    const text = datesText(double.url, plugin).replace('namespace: 2024-01-05', 'namespace: dev');
    const kc1 = new KubeConfig1();
    kc1.loadFromString(text.replace('- name: 2024-01-01', '- name: c').replaceAll('cluster: 2024-01-01', 'cluster: c'));
    const refused = () => new KubernetesStore(kc1 as unknown as clientNode.KubeConfig, { start: false });
    expect(refused).toThrow(InvalidArgumentError);
    expect(refused).toThrow(
      'KubernetesStore: the KubeConfig: the users[0].user.token (user "u") is a date, not text, to the YAML reader of ' +
        '@kubernetes/client-node 1.x (js-yaml 4), which reads an unquoted 2024-01-01 or 2024-01-01T10:00:00Z as a date; ' +
        'client-node kept the date, not the text written (what it holds is not shown): quote it in the kubeconfig ' +
        '("2024-01-01", not 2024-01-01), as kubectl and client-node 2.x read it as text',
    );
    expect(kc1.users[0]?.token).toBeInstanceOf(Date); // the caller's KubeConfig is left as it was
    const kc2 = new KubeConfig();
    kc2.loadFromString(text);
    expect(await sent(kc2, 'ctx')).toEqual(['Bearer 2024-01-02T03:04:05Z']);
  });
});
