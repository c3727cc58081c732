// Three allocators in three processes race to fill one /24 through the API-server double.
//
// Each worker (test/k8s/race-worker.mjs) is plain JavaScript over the BUILT package (dist/), run
// by the runtime running this test: `node race-worker.mjs` under Node, `deno run -A
// race-worker.mjs` under Deno. Each has its own KubernetesStore (list + watch) and Allocator, owns
// its allocations with the Service default/racer-<i>, and calls allocateNext until "range is full".
// The API server's create-by-name is the only lock. Expected: exactly 254 IPAddress objects, no
// address reported by two workers, and every address a worker reports backed by an object whose
// parentRef names that worker's Service.
//
// Needs `npm run build` first (CI: `npm ci` runs it through `prepare`).
// IPALLOCATOR_RACE_REPORT=1 prints the workers' own allocation throughput (never asserted).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allocatorLabels } from '../adapters/store.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { writeKubeconfig } from './k8s/kubeconfig.ts';
import { inRange } from './k8s/allocator-cases.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const WORKER = join(ROOT, 'test', 'k8s', 'race-worker.mjs');
const BUILT = [join(ROOT, 'dist', 'adapters', 'index.js'), join(ROOT, 'dist', 'adapters', 'kubernetes', 'index.js')];
const IS_DENO = 'Deno' in globalThis;
const CIDR = '10.20.30.0/24';
const WORKERS = 3;

type Report = { done: true; ips: string[]; elapsedMs: number; used: number; free: string } | { done: false; error: string; ips: string[] };

/** A worker process and its JSON lines. */
class Worker {
  readonly child: ChildProcess;
  private readonly lines: unknown[] = [];
  private readonly waiters: (() => void)[] = [];
  stderr = '';
  readonly exited: Promise<number | null>;

  constructor(
    readonly service: string,
    kubeconfig: string,
  ) {
    const args = IS_DENO ? ['run', '-A', WORKER, CIDR, service] : [WORKER, CIDR, service];
    this.child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, KUBECONFIG: kubeconfig, NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    createInterface({ input: this.child.stdout! }).on('line', (l) => {
      this.lines.push(JSON.parse(l));
      for (const w of this.waiters.splice(0)) w();
    });
    this.child.stderr!.on('data', (c: Buffer) => (this.stderr += c.toString()));
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code) => {
        for (const w of this.waiters.splice(0)) w();
        resolve(code);
      }),
    );
  }

  /** The n-th JSON line (0-based); rejects if the process exits first. */
  async line(n: number): Promise<unknown> {
    while (this.lines.length <= n) {
      if (this.child.exitCode !== null) throw new Error(`${this.service} exited ${this.child.exitCode}: ${this.stderr}`);
      await new Promise<void>((r) => this.waiters.push(r));
    }
    return this.lines[n];
  }

  go(): void {
    this.child.stdin!.write('go\n');
  }
}

describe(`three ${IS_DENO ? 'Deno' : 'Node'} processes racing on one /24`, () => {
  let d: ApiServerDouble;
  let kubeconfig: { path: string; remove: () => void };
  let workers: Worker[] = [];

  beforeAll(() => {
    const missing = BUILT.filter((f) => !existsSync(f));
    if (missing.length > 0) throw new Error(`the race runs the built package: run \`npm run build\` first (missing ${missing.join(', ')})`);
  });
  beforeEach(async () => {
    d = await ApiServerDouble.start({ requireParentRef: true });
    kubeconfig = writeKubeconfig(d.url);
  });
  afterEach(async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill();
    await Promise.all(workers.map((w) => w.exited));
    workers = [];
    kubeconfig.remove();
    await d.close();
  });

  async function race(): Promise<Report[]> {
    workers = Array.from({ length: WORKERS }, (_, i) => new Worker(`racer-${i}`, kubeconfig.path));
    for (const w of workers) expect(await w.line(0)).toEqual({ ready: true });
    for (const w of workers) w.go();
    const reports = (await Promise.all(workers.map((w) => w.line(1)))) as Report[];
    const codes = await Promise.all(workers.map((w) => w.exited));
    for (const [i, r] of reports.entries()) {
      if (!r.done) throw new Error(`racer-${i} failed: ${r.error}\n${workers[i]!.stderr}`);
    }
    expect(codes).toEqual(workers.map(() => 0));
    return reports;
  }

  function expectExactlyFull(reports: Report[], scenario: string): void {
    const objects = d.objects();
    expect(objects.length).toBe(254);
    const names = objects.map((o) => o.metadata.name);
    expect(new Set(names).size).toBe(254);
    for (const n of names) expect(inRange(CIDR, n), n).toBe(true);

    const reported = reports.flatMap((r) => r.ips);
    expect(reported.length).toBe(254); // no address reported by two workers…
    expect(new Set(reported)).toEqual(new Set(names)); // …and every object reported by one

    const byName = new Map(objects.map((o) => [o.metadata.name, o]));
    reports.forEach((r, i) => {
      for (const ip of r.ips) {
        const o = byName.get(ip)!;
        expect(o.spec?.parentRef, ip).toEqual({ resource: 'services', namespace: 'default', name: `racer-${i}` });
        expect(o.metadata.labels).toEqual(allocatorLabels('IPv4'));
      }
    });
    // Every process's index converged to the full range.
    for (const r of reports) expect(r.done && [r.used, r.free]).toEqual([254, '0']);
    // Collisions: every 409 the double answered was a create that lost the race.
    const creates = d.requestsOf('create').length;
    if (process.env.IPALLOCATOR_RACE_REPORT === '1') {
      const slowest = Math.max(...reports.map((r) => (r.done ? r.elapsedMs : 0)));
      console.log(
        `[race ${IS_DENO ? 'deno' : 'node'} ${scenario}] ${reports.map((r) => r.ips.length).join('+')} = 254 in ${slowest.toFixed(0)} ms ` +
          `(${((254 / slowest) * 1000).toFixed(0)} allocations/s held), ${creates} creates, ${creates - 254} collisions`,
      );
    }
    expect(creates).toBeGreaterThanOrEqual(254);
  }

  // three processes to start: on a loaded machine, that alone may take tens of seconds
  it('fills the range exactly: 254 objects, no duplicates, each owned by the worker that reported it', { timeout: 180_000 }, async () => {
    expectExactlyFull(await race(), 'plain');
  });

  it('the same with create latency and lagging watches (stale caches: collisions resolved by 409)', { timeout: 180_000 }, async () => {
    d.setLatency(1, 'create');
    d.setWatchLag(5);
    expectExactlyFull(await race(), 'lagging');
  });
});
