// The command line reading a kubeconfig with unquoted dates with @kubernetes/client-node 1.x's
// KubeConfig and YAML reader (js-yaml 4, which reads them as Dates) in place of 2.x's (js-yaml 5,
// which reads them as text, as kubectl does). Regression: with 1.x such a file was refused, saying
// the date "is read by YAML as a mapping, not as text, which kubectl cannot read either".
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cli } from './cli-helpers.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';

vi.mock('@kubernetes/client-node', async (importOriginal) => {
  const original = await importOriginal<typeof import('@kubernetes/client-node')>();
  const one = await import('client-node-1');
  return { ...original, KubeConfig: one.KubeConfig, loadYaml: one.loadYaml, loadAllYaml: one.loadAllYaml };
});

describe('a kubeconfig with unquoted dates, read by the command line with client-node 1.x', () => {
  let double: ApiServerDouble;
  let dir: string;
  beforeEach(async () => {
    double = await ApiServerDouble.start({ tls: true }); // the token is sent: over https, as kubectl sends it
    dir = mkdtempSync(join(tmpdir(), 'ipallocator-dates-1-'));
  });
  afterEach(async () => {
    await double.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const text = (token: string) =>
    `apiVersion: v1\nkind: Config\nclusters:\n- name: 2024-01-01\n  cluster: {server: "${double.url}", insecure-skip-tls-verify: true}\n` +
    `users:\n- name: u\n  user: {token: ${token}}\ncontexts:\n- name: 2024-01-03\n  context: {cluster: 2024-01-01, user: u}\n` +
    'current-context: 2024-01-03\n';

  it('is read as the text written, as kubectl reads it: the context named, the token sent', async () => {
    const path = join(dir, 'config');
    writeFileSync(path, text('2024-01-02T03:04:05Z'));
    const r = await cli(['status', '--kubeconfig', path, '--context', '2024-01-03']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(new Set(double.requests.map((q) => q.authorization))).toEqual(new Set(['Bearer 2024-01-02T03:04:05Z']));
  });

  it('spelled two ways in the file is refused, naming the field and saying to quote it', async () => {
    const path = join(dir, 'config');
    writeFileSync(path, text('2024-01-01T00:00:00Z'));
    const r = await cli(['status', '--kubeconfig', path]);
    expect([r.code, r.stderr]).toEqual([
      2,
      `ipallocator: cannot read ${JSON.stringify(path)}: the clusters[0].name is a date, not text, to the YAML reader of @kubernetes/client-node 1.x ` +
        '(js-yaml 4), which reads an unquoted 2024-01-01 or 2024-01-01T10:00:00Z as a date; the text written cannot be told from ' +
        'the file, where no one spelling reads as that date (what it holds is not shown): quote it in the kubeconfig ' +
        '("2024-01-01", not 2024-01-01), as kubectl and client-node 2.x read it as text\n',
    ]);
    expect(double.requests).toEqual([]);
  });
});
