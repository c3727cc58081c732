// Answers that are not what the command asked for: a 200 whose body is an auth proxy's login page,
// `{}`, a JSON string, a Status, a list or object without kind or apiVersion, or a list whose
// items are not named objects. Each is one line
// saying the server answered with a malformed body (and what it was), exit 2 — never read as an
// empty list (which would make every IPAddress an orphan, and `--fix` delete live ones) nor as
// a Service or IPAddress it is not.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addIPAddress, addService, addServiceCIDR, cli, startCluster, type Cluster } from './cli-helpers.ts';

const STACK = /\n\s+at /;
/** A clock past upstream's 60 s grace for everything the test just created. */
const later = () => Date.now() + 61_000;
const LOGIN_PAGE = '<html><body>Sign in to continue</body></html>';

/** One line on stderr saying `request` was answered with a malformed body, then `what`. */
function malformed(request: string, what: string): RegExp {
  const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `^ipallocator: the API server at http://127\\.0\\.0\\.1:\\d+ \\(context "double"\\) answered ${escaped(request)} with a malformed body${escaped(what)}\\n$`,
  );
}

describe('ipallocator: an answer that is not what was asked for', () => {
  let c: Cluster;
  beforeEach(async () => {
    c = await startCluster();
    addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/24']);
    for (let i = 1; i <= 3; i++) {
      addService(c.double, 'default', `s${i}`, [`10.96.0.${i}`]);
      addIPAddress(c.double, `10.96.0.${i}`, { namespace: 'default', name: `s${i}` });
    }
  });
  afterEach(async () => {
    await c.close();
  });

  const listAnswers: { name: string; body: unknown; what: string }[] = [
    { name: 'a login page (200 text/html)', body: LOGIN_PAGE, what: ' (content type text/html): not JSON' },
    { name: 'an empty object', body: {}, what: ': an empty object, not an IPAddressList' },
    {
      // what no kube-apiserver sends: it writes kind and apiVersion on every list
      name: 'a list without kind or apiVersion',
      body: { metadata: { resourceVersion: '9' }, items: [] },
      what: ': an object without a kind, not an IPAddressList',
    },
    {
      name: 'a list without apiVersion',
      body: { kind: 'IPAddressList', metadata: { resourceVersion: '9' }, items: [] },
      what: ': an IPAddressList without an apiVersion',
    },
    {
      name: 'a list whose kind is null',
      body: { kind: null, apiVersion: 'networking.k8s.io/v1', metadata: { resourceVersion: '9' }, items: [] },
      what: ': an object without a kind, not an IPAddressList',
    },
    { name: 'a JSON string', body: 'ok', what: ': the JSON string "ok", not an IPAddressList' },
    { name: 'an empty JSON array', body: [], what: ': a JSON array, not an IPAddressList' },
    { name: 'a JSON number', body: 42, what: ': the JSON number 42, not an IPAddressList' },
    {
      name: 'a list whose items are an object',
      body: { kind: 'IPAddressList', apiVersion: 'networking.k8s.io/v1', metadata: { resourceVersion: '9' }, items: { a: {} } },
      what: ': an IPAddressList whose items are an object, not a list',
    },
    {
      name: 'a Status sent with 200',
      body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' },
      what: ': an object of kind "Status", not an IPAddressList',
    },
    {
      name: 'a list whose items are null',
      body: { kind: 'IPAddressList', apiVersion: 'networking.k8s.io/v1', metadata: { resourceVersion: '9' }, items: null },
      what: ': an IPAddressList whose items are null',
    },
    {
      name: 'a list whose item is null',
      body: { kind: 'IPAddressList', apiVersion: 'networking.k8s.io/v1', metadata: { resourceVersion: '9' }, items: [null] },
      what: ': an IPAddressList whose item 0 is null',
    },
    {
      name: 'a list whose item has no metadata',
      body: { kind: 'IPAddressList', apiVersion: 'networking.k8s.io/v1', metadata: { resourceVersion: '9' }, items: [{ spec: {} }] },
      what: ': an IPAddressList whose item 0 is an object without metadata',
    },
    {
      name: 'a list whose item has no name',
      body: { kind: 'IPAddressList', apiVersion: 'networking.k8s.io/v1', metadata: { resourceVersion: '9' }, items: [{ metadata: {} }] },
      what: ': an IPAddressList whose item 0 is an object without a name',
    },
  ];
  for (const a of listAnswers) {
    it(`status, the IPAddress list answered with ${a.name}: says so in one line, exit 2, reports no count`, async () => {
      // a JSON string needs its own content type: as text it would be a login page
      const options = a.name === 'a JSON string' ? { contentType: 'application/json' } : {};
      c.double.proxyAnswerNext('list', 'ipaddresses', a.name === 'a JSON string' ? JSON.stringify(a.body) : a.body, options);
      const r = await cli(['status', '--kubeconfig', c.kubeconfig]);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toMatch(malformed('list ipaddresses.networking.k8s.io', a.what));
      expect(r.stderr).not.toMatch(STACK);
    });
  }

  it.each([
    [
      'status',
      'servicecidrs',
      {
        kind: 'ServiceCIDRList',
        apiVersion: 'networking.k8s.io/v1',
        metadata: {},
        items: [{ metadata: { name: 'str' }, spec: { cidrs: '10.97.0.0/24' } }],
      },
      'list servicecidrs.networking.k8s.io',
      ': a ServiceCIDRList whose item 0 is an object ("str") whose spec.cidrs is a string, not a list of strings',
    ],
    [
      'status',
      'servicecidrs',
      {
        kind: 'ServiceCIDRList',
        apiVersion: 'networking.k8s.io/v1',
        metadata: {},
        items: [{ metadata: { name: 'num' }, spec: { cidrs: [10] } }],
      },
      'list servicecidrs.networking.k8s.io',
      ': a ServiceCIDRList whose item 0 is an object ("num") whose spec.cidrs is a list holding a number, not a list of strings',
    ],
    // Regression: an empty list was said to be "a list holding strings"
    [
      'status',
      'servicecidrs',
      {
        kind: 'ServiceCIDRList',
        apiVersion: 'networking.k8s.io/v1',
        metadata: {},
        items: [{ metadata: { name: 'odd', labels: [] }, spec: { cidrs: ['10.96.0.0/24'] } }],
      },
      'list servicecidrs.networking.k8s.io',
      ': a ServiceCIDRList whose item 0 is an object ("odd") whose metadata.labels is an empty list, not a map of strings',
    ],
    [
      'check',
      'services',
      {
        kind: 'ServiceList',
        apiVersion: 'v1',
        metadata: {},
        items: [{ metadata: { namespace: 'default', name: 'str' }, spec: { clusterIPs: '10.96.0.1' } }],
      },
      'list services',
      ': a ServiceList whose item 0 is an object ("str") whose spec.clusterIPs is a string, not a list of strings',
    ],
    // Regression: a deletionTimestamp that is no string was read as "not being deleted", and the
    // IPAddress proposed for deletion
    [
      'check',
      'ipaddresses',
      {
        kind: 'IPAddressList',
        apiVersion: 'networking.k8s.io/v1',
        metadata: {},
        items: [{ metadata: { name: '10.96.0.9', deletionTimestamp: 1764900000 }, spec: {} }],
      },
      'list ipaddresses.networking.k8s.io',
      ': an IPAddressList whose item 0 is an object ("10.96.0.9") whose metadata.deletionTimestamp is a number, not a string',
    ],
    // Regression: a Service without a namespace was read as the Service "/kubernetes", and the
    // IPAddresses of default/kubernetes reported as orphans and held by another
    [
      'check',
      'services',
      { kind: 'ServiceList', apiVersion: 'v1', metadata: {}, items: [{ metadata: { name: 's1' }, spec: { clusterIPs: ['10.96.0.1'] } }] },
      'list services',
      ': a ServiceList whose item 0 is an object without a namespace',
    ],
    [
      'check',
      'services',
      {
        kind: 'ServiceList',
        apiVersion: 'v1',
        metadata: {},
        items: [
          { metadata: { namespace: 'default', name: 's1' }, spec: { clusterIPs: ['10.96.0.1'] } },
          { metadata: { namespace: '', name: 's2' }, spec: { clusterIPs: ['10.96.0.2'] } },
        ],
      },
      'list services',
      ': a ServiceList whose item 1 is an object without a namespace',
    ],
  ])(
    '%s, the %s list holding a field of the wrong type or without a namespace: that object is malformed, said once, never read one character at a time',
    async (command, resource, body, request, what) => {
      c.double.proxyAnswerNext('list', resource, body, { count: 2 });
      const r = await cli([command, '--kubeconfig', c.kubeconfig], { now: later });
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toMatch(malformed(request, what));
    },
  );

  it('check --fix --yes, the Service list answered with a login page: deletes nothing, says so, exit 2', async () => {
    c.double.proxyAnswerNext('list', 'services', LOGIN_PAGE, { count: 2 });
    const report = await cli(['check', '--kubeconfig', c.kubeconfig], { now: later });
    expect([report.code, report.stdout]).toEqual([2, '']);
    expect(report.stderr).toMatch(malformed('list services', ' (content type text/html): not JSON'));
    const fixed = await cli(['check', '--fix', '--yes', '--kubeconfig', c.kubeconfig], { now: later });
    expect([fixed.code, fixed.stdout]).toEqual([2, '']);
    expect(c.double.objects('ipaddresses').map((o) => o.metadata.name)).toEqual(['10.96.0.1', '10.96.0.2', '10.96.0.3']);
    expect(c.double.requests.filter((q) => q.verb === 'delete')).toEqual([]);
  });

  it.each([
    ['check', 'services', 'list services', 'a ServiceList'],
    ['status', 'servicecidrs', 'list servicecidrs.networking.k8s.io', 'a ServiceCIDRList'],
  ])('%s, the %s list answered without kind or apiVersion: malformed, never an empty list', async (command, resource, request, asked) => {
    c.double.proxyAnswerNext('list', resource, { metadata: { resourceVersion: '9' }, items: [] }, { count: 2 });
    const r = await cli([command, '--kubeconfig', c.kubeconfig], { now: later });
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toMatch(malformed(request, `: an object without a kind, not ${asked}`));
  });

  // Regression: only the apiVersion's type was checked: a list in another version than asked for
  // (an aggregated API's, a proxy's own) was read as the one asked for
  it.each([
    ['check', 'services', { kind: 'ServiceList', apiVersion: 'v2' }, 'list services', ': a ServiceList of apiVersion "v2", not "v1"'],
    [
      'check',
      'services',
      { kind: 'List', apiVersion: 'networking.k8s.io/v1' },
      'list services',
      ': a List of apiVersion "networking.k8s.io/v1", not "v1"',
    ],
    [
      'status',
      'ipaddresses',
      { kind: 'IPAddressList', apiVersion: 'networking.k8s.io/v1beta1' },
      'list ipaddresses.networking.k8s.io',
      ': an IPAddressList of apiVersion "networking.k8s.io/v1beta1", not "networking.k8s.io/v1"',
    ],
    [
      'status',
      'servicecidrs',
      { kind: 'ServiceCIDRList', apiVersion: 'v1' },
      'list servicecidrs.networking.k8s.io',
      ': a ServiceCIDRList of apiVersion "v1", not "networking.k8s.io/v1"',
    ],
  ])('%s, the %s list in another apiVersion than asked for: malformed, never read', async (command, resource, type, request, what) => {
    c.double.proxyAnswerNext('list', resource, { ...type, metadata: {}, items: [] }, { count: 2 });
    const r = await cli([command, '--kubeconfig', c.kubeconfig], { now: later });
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toMatch(malformed(request, what));
  });

  const reReads: { name: string; verb: 'get'; plural: string; body: unknown; what: string }[] = [
    {
      name: 'the Service re-read answered in another apiVersion',
      verb: 'get',
      plural: 'services',
      body: { kind: 'Service', apiVersion: 'v2', metadata: { name: 'gone', namespace: 'default' }, spec: { clusterIPs: ['10.96.0.50'] } },
      what: 'get services "default/gone" with a malformed body: a Service of apiVersion "v2", not "v1"',
    },
    {
      name: 'the IPAddress re-read answered in another apiVersion',
      verb: 'get',
      plural: 'ipaddresses',
      body: {
        kind: 'IPAddress',
        apiVersion: 'networking.k8s.io/v1beta1',
        metadata: { name: '10.96.0.50' },
        spec: { parentRef: { resource: 'services', namespace: 'default', name: 'gone' } },
      },
      what: 'get ipaddresses.networking.k8s.io "10.96.0.50" with a malformed body: an IPAddress of apiVersion "networking.k8s.io/v1beta1", not "networking.k8s.io/v1"',
    },
    {
      name: 'the Service re-read answered with a login page',
      verb: 'get',
      plural: 'services',
      body: LOGIN_PAGE,
      what: 'get services "default/gone" with a malformed body (content type text/html): not JSON',
    },
    {
      name: 'the Service re-read answered with another Service',
      verb: 'get',
      plural: 'services',
      body: { kind: 'Service', apiVersion: 'v1', metadata: { name: 'other', namespace: 'default' }, spec: { clusterIPs: ['10.96.0.9'] } },
      what: 'get services "default/gone" with a malformed body: the Service "default/other", not "default/gone"',
    },
    {
      name: 'the Service re-read answered without kind or apiVersion',
      verb: 'get',
      plural: 'services',
      body: { metadata: { name: 'gone', namespace: 'default' }, spec: { clusterIPs: ['10.96.0.50'] } },
      what: 'get services "default/gone" with a malformed body: an object without a kind, not the Service "gone"',
    },
    {
      name: 'the IPAddress re-read answered without apiVersion',
      verb: 'get',
      plural: 'ipaddresses',
      body: {
        kind: 'IPAddress',
        metadata: { name: '10.96.0.50' },
        spec: { parentRef: { resource: 'services', namespace: 'default', name: 'gone' } },
      },
      what: 'get ipaddresses.networking.k8s.io "10.96.0.50" with a malformed body: an IPAddress without an apiVersion',
    },
    {
      name: 'the IPAddress re-read answered with an empty object',
      verb: 'get',
      plural: 'ipaddresses',
      body: {},
      what: 'get ipaddresses.networking.k8s.io "10.96.0.50" with a malformed body: an object without metadata, not the IPAddress "10.96.0.50"',
    },
  ];
  for (const a of reReads) {
    it(`check --fix --yes, ${a.name}: deletes nothing and stops, exit 2`, async () => {
      // an orphan at the listing; its Service is created before --fix reads it again
      addIPAddress(c.double, '10.96.0.50', { namespace: 'default', name: 'gone' });
      c.double.proxyAnswerNext(a.verb, a.plural, a.body);
      const r = await cli(['check', '--fix', '--yes', '--json', '--kubeconfig', c.kubeconfig], { now: later });
      expect(r.code).toBe(2);
      const fixed = JSON.parse(r.stdout).fixed;
      expect(fixed.deleted).toEqual([]);
      expect(fixed.stoppedBy).toContain(`answered ${a.what}`);
      expect(c.double.requests.filter((q) => q.verb === 'delete')).toEqual([]);
      expect(c.double.objects('ipaddresses').map((o) => o.metadata.name)).toContain('10.96.0.50');
    });
  }

  it("check --fix --yes, the Service re-read answered 404 by a proxy: not taken as 'no such Service', nothing deleted", async () => {
    // a 404 whose body is no Status naming the Service says nothing about it (kube-apiserver's names it)
    addIPAddress(c.double, '10.96.0.50', { namespace: 'default', name: 'gone' });
    c.double.proxyAnswerNext('get', 'services', '<html><title>404 Not Found</title></html>', { status: 404 });
    const r = await cli(['check', '--fix', '--yes', '--json', '--kubeconfig', c.kubeconfig], { now: later });
    expect(r.code).toBe(1); // the leak is still there
    const fixed = JSON.parse(r.stdout).fixed;
    expect(fixed.deleted).toEqual([]);
    expect(fixed.failed.map((f: { ip: string; error: string }) => [f.ip, f.error])).toEqual([
      [
        '10.96.0.50',
        expect.stringMatching(
          /^get services "default\/gone" failed: the API server at \S+ \(context "double"\) answered HTTP 404 Not Found with a body of 41 bytes \(text\/html\)/,
        ),
      ],
    ]);
    expect(c.double.requests.filter((q) => q.verb === 'delete')).toEqual([]);
    expect(c.double.objects('ipaddresses').map((o) => o.metadata.name)).toContain('10.96.0.50');
  });

  it('check --fix --yes, the delete answered with the IPAddress in another apiVersion: not reported as deleted or held, stops, exit 2', async () => {
    addIPAddress(c.double, '10.96.0.50', { namespace: 'default', name: 'gone' });
    c.double.proxyAnswerNext('delete', 'ipaddresses', {
      kind: 'IPAddress',
      apiVersion: 'networking.k8s.io/v1beta1',
      metadata: { name: '10.96.0.50', deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['x'] },
      spec: { parentRef: { resource: 'services', namespace: 'default', name: 'gone' } },
    });
    const r = await cli(['check', '--fix', '--yes', '--json', '--kubeconfig', c.kubeconfig], { now: later });
    expect(r.code).toBe(2);
    const fixed = JSON.parse(r.stdout).fixed;
    expect([fixed.deleted, fixed.skipped]).toEqual([[], []]);
    expect(fixed.stoppedBy).toContain(
      'answered delete ipaddresses.networking.k8s.io "10.96.0.50" with a malformed body: an IPAddress of apiVersion "networking.k8s.io/v1beta1", not "networking.k8s.io/v1"',
    );
  });

  it('check --fix --yes, the delete answered with a login page: not reported as deleted or held, stops, exit 2', async () => {
    addIPAddress(c.double, '10.96.0.50', { namespace: 'default', name: 'gone' });
    c.double.proxyAnswerNext('delete', 'ipaddresses', LOGIN_PAGE);
    const r = await cli(['check', '--fix', '--yes', '--json', '--kubeconfig', c.kubeconfig], { now: later });
    expect(r.code).toBe(2);
    const fixed = JSON.parse(r.stdout).fixed;
    expect([fixed.deleted, fixed.skipped]).toEqual([[], []]);
    expect(fixed.stoppedBy).toContain(
      'answered delete ipaddresses.networking.k8s.io "10.96.0.50" with a malformed body (content type text/html): not JSON',
    );
  });
});
