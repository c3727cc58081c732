// The loader reads a kubeconfig's text itself for what client-node reads otherwise or drops (the
// users' token-files, their as-uid, as-groups and as-user-extra): one parse serves both
// (config.ts kubeconfigDocument). client-node's own parse (KubeConfig.loadFromString) goes
// through js-yaml directly, not through the loadAllYaml counted here.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as clientNode from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadKubeconfigText } from '../adapters/kubernetes/config.ts';
import { impersonationHeaders } from '../adapters/kubernetes/impersonation.ts';

vi.mock('@kubernetes/client-node', async (importOriginal) => {
  const original = await importOriginal<typeof import('@kubernetes/client-node')>();
  return { ...original, loadAllYaml: vi.fn(original.loadAllYaml) };
});

describe('a kubeconfig naming a token-file and impersonation fields', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ipallocator-parse-once-'));
    vi.mocked(clientNode.loadAllYaml).mockClear();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // Regression: the token-files and the impersonation fields were each read from a parse of their own.
  it('is parsed once by the loader, and both are read from that parse', () => {
    writeFileSync(join(dir, 'token'), 'from-the-file\n');
    const text =
      'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:1"}\n' +
      'users:\n- name: u\n  user: {token-file: token, as: alice, as-groups: [dev]}\n' +
      'contexts:\n- name: ctx\n  context: {cluster: c, user: u}\ncurrent-context: ctx\n';
    const kc = new clientNode.KubeConfig();
    loadKubeconfigText(kc, text, join(dir, 'config'));
    expect(kc.getCurrentUser()?.token).toBe('from-the-file');
    expect(impersonationHeaders(kc.getCurrentUser())).toEqual([['Impersonate-Group', 'dev']]);
    expect(clientNode.loadAllYaml).toHaveBeenCalledTimes(1);
  });

  it('is not parsed by the loader when it names neither', () => {
    const kc = new clientNode.KubeConfig();
    loadKubeconfigText(kc, 'apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user: {token: t}\n', join(dir, 'config'));
    expect(clientNode.loadAllYaml).not.toHaveBeenCalled();
  });
});
