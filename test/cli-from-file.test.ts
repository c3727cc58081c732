// `status --from FILE` and `check --from FILE`: a saved listing (what `kubectl get
// servicecidrs,ipaddresses,services -A -o json` writes) read instead of the cluster. The reports
// must be those the cluster's own listing gives: the double is loaded with the example's objects,
// its listing saved as kubectl saves it, and both commands run against each.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckReport } from '../cli/check.ts';
import type { StatusReport } from '../cli/status.ts';
import { cli, startCluster, type Cluster } from './cli-helpers.ts';
import type { KubeObject } from './k8s/apiserver-double.ts';

const EXAMPLE = 'docs/cluster-example.json';
const example = JSON.parse(readFileSync(EXAMPLE, 'utf8')) as { items: KubeObject[] };
const dir = mkdtempSync(join(tmpdir(), 'ipallocator-from-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `content` (text as it is, anything else as JSON) to a file of the test's folder; its path. */
function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

/** kubectl's generic List of `items`. */
const list = (items: unknown[]) => ({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items });

/** The example's items of one kind. */
const ofKind = (kind: string) => example.items.filter((o) => o.kind === kind);

/** A report without what names where it was read from. */
function withoutSource<T extends { context: string; server: string; from: string | null }>(report: T) {
  const { context: _c, server: _s, from: _f, ...rest } = report;
  return rest;
}

describe('status and check --from a saved listing', () => {
  let c: Cluster;
  let saved: string;
  beforeEach(async () => {
    c = await startCluster();
    const d = c.double;
    for (const o of ofKind('ServiceCIDR')) d.insert(o, 'servicecidrs');
    d.requireParentRef = false;
    for (const o of ofKind('IPAddress')) d.insert(o);
    for (const o of ofKind('Service')) d.insertService(o);
    // the double's listing saved as kubectl saves it: each item with its kind and apiVersion
    const get = async (path: string, kind: string, apiVersion: string) => {
      const answer = await fetch(`${d.url}${path}`, { headers: { authorization: 'Bearer x' } });
      const body = (await answer.json()) as { items: Record<string, unknown>[] };
      return body.items.map((item) => ({ apiVersion, kind, ...item }));
    };
    saved = file(
      'saved.json',
      list([
        ...(await get('/apis/networking.k8s.io/v1/servicecidrs', 'ServiceCIDR', 'networking.k8s.io/v1')),
        ...(await get('/apis/networking.k8s.io/v1/ipaddresses', 'IPAddress', 'networking.k8s.io/v1')),
        ...(await get('/api/v1/services', 'Service', 'v1')),
      ]),
    );
  });
  afterEach(async () => {
    await c.close();
  });

  it('status reports what the cluster listing gives, naming the file instead of the context', async () => {
    const live = await cli(['status', '--json', '--kubeconfig', c.kubeconfig]);
    const fromFile = await cli(['status', '--json', '--from', saved]);
    expect(fromFile).toMatchObject({ code: 0, stderr: '' });
    const report = JSON.parse(fromFile.stdout) as StatusReport;
    expect(report).toMatchObject({ schema: 'ipallocator/status/v1', context: '', server: '', from: saved, ipAddresses: 27 });
    expect(JSON.parse(live.stdout)).toMatchObject({ from: null });
    expect(withoutSource(report)).toEqual(withoutSource(JSON.parse(live.stdout) as StatusReport));
    const text = await cli(['status', '--from', saved]);
    expect(text.stdout.split('\n')[0]).toBe(`file ${saved}: 2 ServiceCIDRs, 27 IPAddresses`);
  });

  it('check reports what the cluster listing gives: the orphan and the missing IPAddress', async () => {
    const now = () => Date.now() + 3600_000; // every object past the grace
    const live = await cli(['check', '--json', '--kubeconfig', c.kubeconfig], { now });
    const fromFile = await cli(['check', '--json', '--from', saved], { now });
    expect(fromFile.stderr).toBe('');
    expect([live.code, fromFile.code]).toEqual([1, 1]);
    const report = JSON.parse(fromFile.stdout) as CheckReport;
    expect(report).toMatchObject({ context: '', server: '', from: saved, fixed: null, clean: false });
    expect(report.findings.map((f) => [f.kind, f.ip])).toEqual([
      ['orphan', '10.96.0.245'],
      ['missing', '10.96.0.52'],
    ]);
    expect(withoutSource(report)).toEqual(withoutSource(JSON.parse(live.stdout) as CheckReport));
    const text = await cli(['check', '--from', saved], { now });
    expect(text.stdout).toContain('1 IPAddress to delete (run check --fix on the cluster).');
  });

  it('reads the listing from standard input with --from -', async () => {
    const fromFile = await cli(['check', '--json', '--from', saved]);
    const fromStdin = await cli(['check', '--json', '--from', '-'], { stdin: readFileSync(saved, 'utf8') });
    expect(fromStdin.stderr).toBe('');
    expect(fromStdin.code).toBe(fromFile.code);
    expect(JSON.parse(fromStdin.stdout)).toMatchObject({ from: '-' });
    expect(withoutSource(JSON.parse(fromStdin.stdout) as CheckReport)).toEqual(withoutSource(JSON.parse(fromFile.stdout) as CheckReport));
    const text = await cli(['status', '--from', '-'], { stdin: readFileSync(saved, 'utf8') });
    expect(text.stdout.split('\n')[0]).toBe('standard input: 2 ServiceCIDRs, 27 IPAddresses');
  });

  it('reads networking.k8s.io/v1beta1 items as a v1beta1 listing of the cluster is read', async () => {
    const body = JSON.parse(readFileSync(saved, 'utf8')) as { items: { apiVersion: string }[] };
    for (const item of body.items) item.apiVersion = item.apiVersion.replace(/\/v1$/, '/v1beta1');
    const beta = await cli(['check', '--json', '--from', file('beta.json', body)]);
    const v1 = await cli(['check', '--json', '--from', saved]);
    expect(beta.stderr).toBe('');
    expect(withoutSource(JSON.parse(beta.stdout) as CheckReport)).toEqual(withoutSource(JSON.parse(v1.stdout) as CheckReport));
  });
});

describe('--from refusals', () => {
  it('refuses check --fix, and the options of a cluster, before reading anything', async () => {
    const missing = join(dir, 'never-read.json');
    const cases: [string[], string][] = [
      [
        ['check', '--fix', '--from', missing],
        '--fix deletes IPAddress objects from a cluster, and --from reads no cluster: run check --fix without --from',
      ],
      [['status', '--from', missing, '--kubeconfig', 'k'], '--from reads a saved listing, not a cluster: --kubeconfig does not go with it'],
      [['check', '--from', missing, '--context', 'x'], '--from reads a saved listing, not a cluster: --context does not go with it'],
      [
        ['status', '--from', missing, '--request-timeout', '5s'],
        '--from reads a saved listing, not a cluster: --request-timeout does not go with it',
      ],
    ];
    for (const [argv, said] of cases) {
      expect(await cli(argv)).toEqual({
        code: 2,
        stdout: '',
        stderr: `ipallocator: ${said}\nRun 'ipallocator ${argv[0]} --help' for usage.\n`,
      });
    }
  });

  it('refuses --from - when standard input is a terminal', async () => {
    const r = await cli(['status', '--from', '-'], { stdinTTY: true });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--from - reads the listing from standard input, which is a terminal');
  });

  it('check refuses a listing without Services; status reads it', async () => {
    const path = file('no-services.json', list(example.items.filter((o) => o.kind !== 'Service')));
    expect(await cli(['check', '--from', path])).toEqual({
      code: 2,
      stdout: '',
      stderr: `ipallocator: "${path}" holds no Service: check compares each IPAddress with the Service that holds it, and would take every one for an orphan; save them too: kubectl get servicecidrs,ipaddresses,services -A -o json\n`,
    });
    const status = await cli(['status', '--json', '--from', path]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ ipAddresses: 27 });
  });

  it('check says an IPAddress the file lists twice is listed twice by the file, read as the later item', async () => {
    const orphan = ofKind('IPAddress').find((o) => o.metadata.name === '10.96.0.245')!;
    const now = () => Date.now() + 3600_000; // past the grace
    const path = file('twice.json', list([...example.items, orphan]));
    const report = JSON.parse((await cli(['check', '--json', '--from', path], { now })).stdout) as CheckReport;
    const found = report.findings.find((f) => f.ip === orphan.metadata.name)!;
    expect(found.message).toMatch(/; the file lists it twice, read as the later item$/);
    const text = await cli(['check', '--from', '-'], {
      stdin: JSON.stringify(list([...example.items, orphan, orphan])),
      now,
    });
    expect(text.stdout).toContain('; standard input lists it 3 times, read as the later item');
  });

  it('reads a ServiceCIDR or a Service the file lists twice as one, the later item, and says so where a finding names it', async () => {
    // the same ServiceCIDR as v1 and then as v1beta1, no longer ready: status shows it once, as the later item says
    const kubernetes = ofKind('ServiceCIDR').find((o) => o.metadata.name === 'kubernetes')!;
    const later = {
      ...kubernetes,
      apiVersion: 'networking.k8s.io/v1beta1',
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Terminating', message: '' }] },
    };
    const cidrs = file('servicecidr-twice.json', list([...example.items, later]));
    const status = JSON.parse((await cli(['status', '--json', '--from', cidrs])).stdout) as StatusReport;
    expect(status.serviceCIDRs.map((sc) => [sc.name, sc.ready])).toEqual([
      ['kubernetes', false],
      ['extra', true],
    ]);
    // a Service listed twice: its finding once, saying the file lists it twice
    const ledger = ofKind('Service').find((o) => o.metadata.name === 'ledger')!;
    const services = file('service-twice.json', list([...example.items, ledger]));
    const once = JSON.parse((await cli(['check', '--json', '--from', EXAMPLE])).stdout) as CheckReport;
    const twice = JSON.parse((await cli(['check', '--json', '--from', services])).stdout) as CheckReport;
    const ledgers = twice.findings.filter((f) => f.service === `${ledger.metadata.namespace}/ledger`);
    expect(ledgers.length).toBeGreaterThan(0);
    for (const f of ledgers) expect(f.message).toMatch(/; the file lists Service "?[\w-]+\/ledger"? twice, read as the later item$/);
    expect(twice.findings.map((f) => f.ip)).toEqual(once.findings.map((f) => f.ip));
  });

  // A malformed listing is said as a cluster's malformed answer is: what was found, the item by its index.
  const sc = ofKind('ServiceCIDR')[0]!;
  const svc = ofKind('Service')[0]!;
  const ip = ofKind('IPAddress')[0]!;
  const MALFORMED: [name: string, content: unknown, said: string][] = [
    ['not JSON (YAML)', 'apiVersion: v1\nkind: List\nitems: []\n', 'it is not JSON (36 bytes of text; YAML is not read: use -o json)'],
    ['empty', '', 'it is empty'],
    ['a JSON array', [sc], 'a JSON array, not a List'],
    [
      "a list of one kind, not kubectl's List",
      { ...list([sc]), kind: 'ServiceCIDRList' },
      'an object of kind "ServiceCIDRList", not a List',
    ],
    ['a List without items', { apiVersion: 'v1', kind: 'List', metadata: {} }, 'a List without items'],
    // kubectl writes its List as metav1's, "v1"
    [
      'a List of another apiVersion',
      { ...list([sc]), apiVersion: 'networking.k8s.io/v1' },
      'a List of apiVersion "networking.k8s.io/v1", not "v1"',
    ],
    ['a List without an apiVersion', { kind: 'List', metadata: {}, items: [sc] }, 'a List without an apiVersion'],
    [
      'an item of another kind',
      list([sc, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' } }]),
      'its item 1 is an object of kind "Pod": only ServiceCIDRs, IPAddresses and Services are read',
    ],
    ['an item that is null', list([sc, null]), 'its item 1 is null: only ServiceCIDRs, IPAddresses and Services are read'],
    ['an item without a name', list([sc, { ...ip, metadata: {} }]), 'its item 1 is an object without a name'],
    ['a Service without a namespace', list([sc, { ...svc, metadata: { name: 'web' } }]), 'its item 1 is an object without a namespace'],
    [
      'an IPAddress of another apiVersion',
      list([sc, { ...ip, apiVersion: 'networking.k8s.io/v1alpha1' }]),
      'its item 1 is an IPAddress of apiVersion "networking.k8s.io/v1alpha1", not "networking.k8s.io/v1" or "networking.k8s.io/v1beta1"',
    ],
    [
      'a ServiceCIDR whose cidrs is a string',
      list([{ ...sc, spec: { cidrs: '10.96.0.0/24' } }]),
      'its item 0 is an object ("kubernetes") whose spec.cidrs is a string, not a list of strings',
    ],
    // read as absent, an object would be taken for a deletion under way (or for none)
    [
      'a ServiceCIDR whose deletionTimestamp is an object',
      list([{ ...sc, metadata: { ...sc.metadata, deletionTimestamp: {} } }]),
      'its item 0 is an object ("kubernetes") whose metadata.deletionTimestamp is an object, not a string',
    ],
  ];
  it.each(MALFORMED)('refuses %s, naming the file', async (name, content, said) => {
    const path = file(`${name.replaceAll(/\W+/g, '-')}.json`, content);
    expect(await cli(['status', '--from', path])).toEqual({
      code: 2,
      stdout: '',
      stderr: `ipallocator: "${path}" is not a saved listing (kubectl get servicecidrs,ipaddresses,services -A -o json): ${said}\n`,
    });
  });

  it('refuses a listing without ServiceCIDRs', async () => {
    const path = file('no-servicecidrs.json', list(ofKind('IPAddress')));
    const r = await cli(['status', '--from', path]);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain(`"${path}" holds no ServiceCIDR`);
  });

  it('says a file that cannot be read by name', async () => {
    const path = join(dir, 'absent.json');
    const r = await cli(['status', '--from', path]);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain(path);
    expect(r.stderr).toContain('--from');
  });
});

describe('--from without @kubernetes/client-node', () => {
  // The peer dependency is for talking to a cluster: a saved listing is read without it. A
  // resolve hook makes it missing for the executable (Node's module hooks; Deno has none).
  it.skipIf('Deno' in globalThis)('status and check read a saved listing where client-node cannot be loaded', async () => {
    const { spawnSync } = await import('node:child_process');
    const hooks = file(
      'no-client-node.mjs',
      `export async function resolve(spec, context, next) {
        if (spec.startsWith('@kubernetes/client-node')) throw Object.assign(new Error('Cannot find package ' + spec), { code: 'ERR_MODULE_NOT_FOUND' });
        return next(spec, context);
      }`,
    );
    const register = file(
      'register.mjs',
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );
    const run = (args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', '--import', pathToFileURL(register).href, 'cli/bin.ts', ...args], {
        encoding: 'utf8',
      });
    // the hook works: a command that needs the cluster says the package is missing
    expect(run(['status']).stderr).toContain('talking to a cluster needs the package @kubernetes/client-node');
    expect(run(['status', '--from', EXAMPLE])).toMatchObject({ status: 0, stderr: '' });
    expect(run(['check', '--from', EXAMPLE])).toMatchObject({ status: 1, stderr: '' });
  });
});

describe('the README example of --from', () => {
  // The README shows the output for its example file as of the day below; the example's ages are
  // counted to the clock, as for a cluster.
  const day = Date.parse('2026-12-07T12:00:00Z');
  const readme = readFileSync('README.md', 'utf8');
  const installed = `node_modules/ipallocator/${EXAMPLE}`;

  /** The output the README shows after `$ npx ipallocator <command> --from …`, up to the next command or the block's end. */
  function shownOutput(command: string): string {
    const start = readme.indexOf(`$ npx ipallocator ${command} --from ${installed}\n`);
    expect(start, `README shows ipallocator ${command} --from`).toBeGreaterThan(0);
    const after = readme.slice(readme.indexOf('\n', start) + 1);
    const end = Math.min(...['\n$ ', '\n```'].map((m) => after.indexOf(m)).filter((i) => i >= 0));
    return `${after.slice(0, end)}\n`;
  }

  it.each(['status', 'check'])('%s prints what the README shows', async (command) => {
    const r = await cli([command, '--from', EXAMPLE], { now: () => day });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(shownOutput(command).replaceAll(installed, EXAMPLE));
  });
});
