// `status --from FILE` / `check --from FILE` given a saved listing no API server would list: a
// field nested thousands deep, a ServiceCIDR or a Service listed twice. Each must be read as the
// cluster's own listing would be, or refused in one short line naming the file (exit 2) — never
// an internal error.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CheckReport } from '../cli/check.ts';
import type { StatusReport } from '../cli/status.ts';
import { cli } from './cli-helpers.ts';

const example = JSON.parse(readFileSync('docs/cluster-example.json', 'utf8')) as {
  items: { kind: string; metadata: { name: string; labels?: unknown } }[];
};
const dir = mkdtempSync(join(tmpdir(), 'ipallocator-from-hostile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** kubectl's generic List of `items`, written to a file of the test's folder; its path. */
function saved(name: string, items: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items }));
  return path;
}

/** `{"a":{"a":…1…}}`, `depth` objects deep, as JSON text (JSON.stringify itself recurses that deep). */
const nested = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('--from a listing with labels nested thousands deep', () => {
  it.each([3_000, 20_000])('%i deep: refused in one short line naming the file, exit 2', async (depth) => {
    const items = structuredClone(example.items);
    items.find((o) => o.kind === 'IPAddress')!.metadata.labels = 'DEEP';
    const path = saved(`deep-${depth}.json`, items);
    writeFileSync(path, readFileSync(path, 'utf8').replace('"DEEP"', nested(depth)));
    const r = await cli(['status', '--from', path]);
    expect(r.stderr).not.toContain('internal error');
    expect(r.code).toBe(2);
    expect(r.stderr.startsWith(`ipallocator: "${path}" is not a saved listing`)).toBe(true);
    // a message to read, not the nesting spelt out level by level
    expect(r.stderr.length).toBeLessThan(1_000);
  });
});

describe('--from a listing that lists a ServiceCIDR twice', () => {
  // A cluster lists each name once; kubectl writes what it lists. A file that lists one twice
  // (two listings concatenated, or the same object as v1 and v1beta1) must not show a range twice.
  it('status shows each ServiceCIDR once, or refuses the file', async () => {
    const kubernetes = example.items.find((o) => o.kind === 'ServiceCIDR' && o.metadata.name === 'kubernetes')!;
    const path = saved('servicecidr-twice.json', [...example.items, kubernetes]);
    const r = await cli(['status', '--json', '--from', path]);
    if (r.code === 2) {
      expect(r.stderr).toContain('twice');
      return;
    }
    const names = (JSON.parse(r.stdout) as StatusReport).serviceCIDRs.map((sc) => sc.name);
    expect(names).toEqual([...new Set(names)]);
  });
});

describe('--from a listing that lists a Service twice', () => {
  it('check reports each finding once, or refuses the file', async () => {
    const ledger = example.items.find((o) => o.kind === 'Service' && o.metadata.name === 'ledger')!;
    const path = saved('service-twice.json', [...example.items, ledger]);
    const r = await cli(['check', '--json', '--from', path]);
    if (r.code === 2) {
      expect(r.stderr).toContain('twice');
      return;
    }
    const findings = (JSON.parse(r.stdout) as CheckReport).findings.map((f) => `${f.kind} ${f.ip} ${f.service}`);
    expect(findings).toEqual([...new Set(findings)]);
  });
});

describe('--from a large file that is no JSON', () => {
  // YAML (`-o yaml`) of a large cluster is tens of MiB: the refusal says how much the file holds,
  // in bytes as its size is listed, counted without taking the text apart character by character.
  it('is refused as not JSON, saying its size in bytes', async () => {
    const path = join(dir, 'large.yaml');
    const entry = '- apiVersion: networking.k8s.io/v1\n  kind: IPAddress\n  metadata:\n    name: 10.96.0.1\n';
    writeFileSync(path, `# listed at the café\napiVersion: v1\nkind: List\nitems:\n${entry.repeat(50_000)}`);
    const r = await cli(['status', '--from', path]);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    const bytes = statSync(path).size.toLocaleString('en-US');
    expect(r.stderr).toBe(
      `ipallocator: "${path}" is not a saved listing (kubectl get servicecidrs,ipaddresses,services -A -o json): it is not JSON (${bytes} bytes of text; YAML is not read: use -o json)\n`,
    );
  });
});
