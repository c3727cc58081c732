// The command line's reading of a kubeconfig that is no kubeconfig, with @kubernetes/client-node
// 1.x's YAML parse (js-yaml 4) in place of 2.x's (js-yaml 5): the two read a file of only
// whitespace and comments differently (js-yaml 4: a null document; js-yaml 5: none), and the
// message must not depend on which is installed (cli-errors.test.ts runs the same files on 2.x).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAllYaml as loadAllYaml1, loadYaml as loadYaml1 } from 'client-node-1';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cli } from './cli-helpers.ts';

vi.mock('@kubernetes/client-node', async (importOriginal) => {
  const original = await importOriginal<typeof import('@kubernetes/client-node')>();
  return { ...original, loadYaml: loadYaml1, loadAllYaml: loadAllYaml1 };
});

describe('a kubeconfig file that is no kubeconfig, read with client-node 1.x', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ipallocator-kubeconfig-1-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // Regression: with client-node 1.x a file of only whitespace or comments was said to be
  // "its YAML is null", while an empty file was said to hold no YAML document.
  it.each([
    ['an empty file', ''],
    ['only whitespace', '   \n\n  \n'],
    ['only comments', '# token: SECRET_IN_A_COMMENT\n'],
    ['comments and blank lines, CRLF', '\r\n# a\r\n  # b\r\n\r\n'],
  ])('%s holds no YAML document, as with 2.x', async (_name, text) => {
    const path = join(dir, 'config');
    writeFileSync(path, text);
    const r = await cli(['status', '--kubeconfig', path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `ipallocator: ${JSON.stringify(path)} is not a kubeconfig: it holds no YAML document (it is empty, or only whitespace and comments)\n`,
    );
  });

  it.each([
    ['null', 'null\n'],
    ['null written ~', '~\n'],
    ['a document marker alone', '---\n'],
    ['null after a comment', '# c\nnull\n'],
  ])('%s is still said to be null', async (_name, text) => {
    const path = join(dir, 'config');
    writeFileSync(path, text);
    const r = await cli(['status', '--kubeconfig', path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is not a kubeconfig: its YAML is null, not a mapping');
  });
});
