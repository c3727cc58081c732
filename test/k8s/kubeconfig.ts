// A KubeConfig (or a kubeconfig file) pointing at an API-server double: over plain HTTP, or over
// HTTPS (a double started with `tls: true`), whose certificate it does not check.
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeConfig as KubeConfig1 } from 'client-node-1';

/** Each test of a table over this runs with client-node 2.x and with 1.x (the 'client-node-1' alias). */
export const BOTH_CLIENT_NODES = [
  ['2.x', KubeConfig],
  ['1.x', KubeConfig1 as unknown as typeof KubeConfig],
] as const;

/** A token the tests look for in error messages (it must never appear there). */
export const TEST_TOKEN = 'test-token-must-not-leak-0123456789';

/** A KubeConfig for `server` (e.g. double.url) with a bearer-token user. */
export function kubeConfigFor(
  server: string,
  token = TEST_TOKEN,
  options: { proxyUrl?: string | undefined; Config?: typeof KubeConfig } = {},
): KubeConfig {
  // `Config`: client-node 1.x's KubeConfig (the 'client-node-1' alias), for a test of both
  const kc = new (options.Config ?? KubeConfig)();
  kc.loadFromOptions({
    clusters: [{ name: 'double', server, skipTLSVerify: true, ...(options.proxyUrl !== undefined && { proxyUrl: options.proxyUrl }) }],
    users: [{ name: 'tester', token }],
    contexts: [{ name: 'double', cluster: 'double', user: 'tester' }],
    currentContext: 'double',
  });
  return kc;
}

/**
 * Writes a kubeconfig file for `server`; returns its path and a function that removes it.
 * `skipTLSVerify: false` leaves out insecure-skip-tls-verify (as a `kubectl proxy` kubeconfig does).
 */
export function writeKubeconfig(
  server: string,
  token = TEST_TOKEN,
  options: { skipTLSVerify?: boolean } = {},
): { path: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'ipallocator-kubeconfig-'));
  const path = join(dir, 'config');
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: double',
    '  cluster:',
    `    server: ${server}`,
    ...(options.skipTLSVerify === false ? [] : ['    insecure-skip-tls-verify: true']),
    'users:',
    '- name: tester',
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: double',
    '  context:',
    '    cluster: double',
    '    user: tester',
    'current-context: double',
    '',
  ].join('\n');
  writeFileSync(path, text, { mode: 0o600 });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
