// The loader reads a kubeconfig's text itself for what client-node reads otherwise or drops (the
// users' token-files, their as-uid, as-groups and as-user-extra) or cannot tell (whether a user it
// read as holding nothing was written as a mapping, whether a list it read as empty was written as
// a list, whether an insecure-skip-tls-verify it read as false was false): one parse serves them all (config.ts
// documentOnce), and none is made when none is needed. client-node's own parse (KubeConfig.loadFromString) goes
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

  it('is not parsed by the loader when it names neither, and its users hold something', () => {
    const kc = new clientNode.KubeConfig();
    loadKubeconfigText(kc, 'apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user: {token: t}\n', join(dir, 'config'));
    expect(clientNode.loadAllYaml).not.toHaveBeenCalled();
  });

  // client-node reads `user: [1]` as `user: {}`: only the text tells them apart
  it('is parsed once when a user holds nothing, and a user that is no mapping is refused from that parse', () => {
    const users = (user: string) => `apiVersion: v1\nkind: Config\nusers:\n- name: a\n  user: {}\n- name: b\n  user: ${user}\n`;
    loadKubeconfigText(new clientNode.KubeConfig(), users('null'), join(dir, 'config'));
    expect(clientNode.loadAllYaml).toHaveBeenCalledTimes(1);
    vi.mocked(clientNode.loadAllYaml).mockClear();
    expect(() => loadKubeconfigText(new clientNode.KubeConfig(), users('[1]'), join(dir, 'config'))).toThrow(
      'the user field of user "b" is a list, not a mapping',
    );
    expect(clientNode.loadAllYaml).toHaveBeenCalledTimes(1);
    vi.mocked(clientNode.loadAllYaml).mockClear();
    // with a token-file named, the parse that read it serves
    writeFileSync(join(dir, 'token'), 't');
    expect(() =>
      loadKubeconfigText(new clientNode.KubeConfig(), `${users('5')}- name: c\n  user: {token-file: token}\n`, join(dir, 'config')),
    ).toThrow('the user field of user "b" is a number, not a mapping');
    expect(clientNode.loadAllYaml).toHaveBeenCalledTimes(1);
  });

  // client-node reads `insecure-skip-tls-verify: "true"` as false: only the text tells it from false
  it('is parsed once when a cluster it names insecure-skip-tls-verify of is read as checking certificates, and not when none is', () => {
    const text = (insecure: string) =>
      `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: ${insecure}}\n` +
      'users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: ctx\n  context: {cluster: c, user: u}\n';
    loadKubeconfigText(new clientNode.KubeConfig(), text('true'), join(dir, 'config'));
    expect(clientNode.loadAllYaml).not.toHaveBeenCalled();
    expect(() => loadKubeconfigText(new clientNode.KubeConfig(), text('"true"'), join(dir, 'config'))).toThrow(
      'the insecure-skip-tls-verify of cluster "c" is the text "true", not true or false',
    );
    expect(clientNode.loadAllYaml).toHaveBeenCalledTimes(1);
  });

  // client-node reads `users: {u: …}` as `users: []`: only the text tells them apart
  it('is parsed once when a list it names is read as empty, and one that is no list is refused from that parse', () => {
    const text = (users: string) => `apiVersion: v1\nkind: Config\nusers: ${users}\ncontexts: []\n`;
    loadKubeconfigText(new clientNode.KubeConfig(), text('[]'), join(dir, 'config'));
    expect(clientNode.loadAllYaml).toHaveBeenCalledTimes(1);
    vi.mocked(clientNode.loadAllYaml).mockClear();
    expect(() => loadKubeconfigText(new clientNode.KubeConfig(), text('{u: {}}'), join(dir, 'config'))).toThrow(
      'its users field is a mapping, not a list',
    );
    expect(clientNode.loadAllYaml).toHaveBeenCalledTimes(1);
  });
});
