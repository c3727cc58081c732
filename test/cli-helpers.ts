// Helpers for the command-line tests: a double with a kubeconfig file, objects as the API server
// holds them, and run() with captured output.
import { Readable } from 'node:stream';
import { expect } from 'vitest';
import { InvalidArgumentError } from '../adapters/errors.ts';
import { KubernetesStore } from '../adapters/kubernetes/index.ts';
import { MemoryStore } from '../adapters/memory-store.ts';
import { MetaAllocator } from '../adapters/meta-allocator.ts';
import { InMemoryServiceCIDRs } from '../adapters/service-cidrs.ts';
import type { StopSignal } from '../cli/errors.ts';
import { run } from '../cli/main.ts';
import { ApiServerDouble, type KubeObject } from './k8s/apiserver-double.ts';
import { writeKubeconfig } from './k8s/kubeconfig.ts';

export const MANAGED_BY = 'ipaddress.kubernetes.io/managed-by';
export const IP_FAMILY = 'ipaddress.kubernetes.io/ip-family';
export const CONTROLLER = 'ipallocator.k8s.io';

/** A double plus a kubeconfig file pointing at it. */
export interface Cluster {
  double: ApiServerDouble;
  kubeconfig: string;
  close(): Promise<void>;
}

/**
 * A double and its kubeconfig; `tls: true` serves https:// (what a test of the credentials sent needs);
 * `keepAliveTimeoutMs` as the double's option (a test counting connections sets it long).
 */
export async function startCluster(options: { tls?: boolean; keepAliveTimeoutMs?: number } = {}): Promise<Cluster> {
  const double = await ApiServerDouble.start({ tls: options.tls ?? false, keepAliveTimeoutMs: options.keepAliveTimeoutMs });
  const kc = writeKubeconfig(double.url);
  return {
    double,
    kubeconfig: kc.path,
    async close() {
      kc.remove();
      await double.close();
    },
  };
}

/** A ServiceCIDR; `ready` undefined leaves out the Ready condition. */
export function addServiceCIDR(d: ApiServerDouble, name: string, cidrs: string[], ready?: boolean): void {
  const obj: KubeObject = { metadata: { name }, spec: { cidrs } };
  if (ready !== undefined) obj.status = { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] };
  const r = d.insert(obj, 'servicecidrs');
  if ('code' in r) throw new Error(`insert servicecidr ${name}: ${JSON.stringify(r)}`);
}

/** An IPAddress as kube-apiserver's allocator writes it (labels, parentRef to a Service), or with overrides. */
export function addIPAddress(
  d: ApiServerDouble,
  ip: string,
  owner: { namespace: string; name: string; group?: string; resource?: string } | null,
  labels: Record<string, string> = { [IP_FAMILY]: ip.includes(':') ? 'IPv6' : 'IPv4', [MANAGED_BY]: CONTROLLER },
): void {
  const spec: Record<string, unknown> = {};
  if (owner !== null)
    spec.parentRef = { group: owner.group ?? '', resource: owner.resource ?? 'services', namespace: owner.namespace, name: owner.name };
  const before = d.requireParentRef;
  d.requireParentRef = false;
  try {
    const r = d.insert({ metadata: { name: ip, labels }, spec });
    if ('code' in r) throw new Error(`insert ipaddress ${ip}: ${JSON.stringify(r)}`);
  } finally {
    d.requireParentRef = before;
  }
}

/** A Service holding `clusterIPs`. */
export function addService(d: ApiServerDouble, namespace: string, name: string, clusterIPs: string[]): void {
  d.insertService({ metadata: { name, namespace }, spec: { clusterIPs, clusterIP: clusterIPs[0] ?? '' } });
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the command in-process; `stdin` is what the operator types (or a stream, read when the
 * command asks); `tty` makes stderr a terminal, `stdinTTY` standard input (piped otherwise);
 * `onInterrupt` stands for executable.ts's signal hook (Io.onInterrupt).
 */
export async function cli(
  argv: string[],
  options: {
    stdin?: string | Readable;
    tty?: boolean;
    stdinTTY?: boolean;
    now?: () => number;
    onInterrupt?: (stop: (signal: StopSignal) => void) => () => void;
  } = {},
): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const stdin = options.stdin instanceof Readable ? options.stdin : Readable.from(options.stdin === undefined ? [] : [options.stdin]);
  const code = await run(argv, {
    stdout: { write: (s: string) => (stdout += s), isTTY: false },
    stderr: { write: (s: string) => (stderr += s), isTTY: options.tty ?? false },
    stdin: Object.assign(stdin, { isTTY: options.stdinTTY ?? false }),
    ...(options.now ? { now: options.now } : {}),
    ...(options.onInterrupt ? { onInterrupt: options.onInterrupt } : {}),
  });
  return { code, stdout, stderr };
}

/** The control characters in `text` other than newline (C0, DEL, C1), as code points: what must never reach a terminal. */
export function controls(text: string): number[] {
  return [...text].map((ch) => ch.codePointAt(0)!).filter((cp) => cp !== 0x0a && (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)));
}

/**
 * What the library says of these ServiceCIDRs: CIDR as written → the reason a MetaAllocator of its
 * family skips it (skipped()). A CIDR missing from the map is served.
 */
export function skipReasons(serviceCIDRs: readonly (readonly [name: string, cidrs: readonly string[]])[]): Map<string, string> {
  const source = new InMemoryServiceCIDRs();
  for (const [name, cidrs] of serviceCIDRs) source.addServiceCIDR(name, [...cidrs], { unvalidated: true });
  const reasons = new Map<string, string>();
  for (const family of ['IPv4', 'IPv6'] as const) {
    const meta = new MetaAllocator(family, source, { store: new MemoryStore() });
    for (const s of meta.skipped()) reasons.set(s.cidr, s.reason.message);
    meta.destroy();
  }
  return reasons;
}

/**
 * A skip reason (skipReasons) as the command line says it: the library's words, but for a prefix
 * without a first address its cause alone, without upstream's bare `invalid address [] (…)` around it.
 */
export function saidByCli(reason: string): string {
  return /^invalid address \[\] \((.*)\)$/s.exec(reason)?.[1] ?? reason;
}

/**
 * The kubeconfig at `path` is refused as it is read, saying `said`, by the library (loading it as
 * $KUBECONFIG, which is put back after: InvalidArgumentError) and by the command line (one line,
 * exit 2), neither showing `secret` when one is given.
 */
export async function refusedAsRead(path: string, said: string, secret?: string): Promise<void> {
  const saved = process.env.KUBECONFIG;
  process.env.KUBECONFIG = path;
  try {
    expect(() => new KubernetesStore(undefined, { start: false })).toThrow(InvalidArgumentError);
    expect(() => new KubernetesStore(undefined, { start: false })).toThrow(
      `KubernetesStore: cannot load the default kubeconfig ($KUBECONFIG, else ~/.kube/config): ${JSON.stringify(path)}: ${said}`,
    );
  } finally {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
  }
  const r = await cli(['status', '--kubeconfig', path]);
  expect([r.code, r.stderr]).toEqual([2, `ipallocator: cannot read ${JSON.stringify(path)}: ${said}\n`]);
  if (secret !== undefined) expect(r.stderr).not.toContain(secret);
}
