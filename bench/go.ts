// go-seed and go-master: upstream's allocator algorithm re-typed in Go (bench/go-seed/), built with
// the local `go` into a temporary directory (nothing built is committed, nothing is installed) and
// run as one child process per series. The harness feeds it the same fills as every other
// implementation (offset files, loaded untimed); the Go program times its own loop and answers
// with its samples, so no cross-process call is inside a measurement.
//
// Both variants share one Go map per series: each case leaves it as it found it.
// Where `go` is missing the rows say "not available: go not installed (…)" and the rest runs.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { BenchCpu } from './cpu.ts';
import type { Budget, Samples, Skipped } from './measure.ts';
import type { Impl, Runner, SeriesCtx, SeriesImpl } from './impl.ts';

export type GoVariant = 'go-seed' | 'go-master';

const sourceDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'go-seed');

/** What the results say about the Go rows (written under the table). */
export const GO_NOTE =
  "`go-seed` is upstream's allocator algorithm (pkg/registry/core/service/ipallocator/ipallocator.go, the file this project " +
  'started from) re-typed in Go with the standard library: netip first/offset/last, calculateRangeOffset, math/big for the ' +
  'offset add, rand.Int63n/rand.Uint64, the wraparound iterator, one String() and one lookup per candidate. A Go map stands in ' +
  'for the lister and the client, so Go builds no IPAddress objects and gets no watch events, and the metrics calls (Used()/Free() ' +
  'list the cache on every create upstream) and the trace are left out: every omission favours Go. `go-master` adds upstream ' +
  "master's /64 fix (its own rand, SetUint64, the overflow guard); `go-seed` at /64 draws addresses outside the range half " +
  'the time, as that file does. Both are fed the same fills and time their own loop (median of samples). Needs `go` ' +
  '(Debian: apt-get install golang-go); `npm run bench` installs nothing.';

const NO_GO = 'go not installed (apt-get install golang-go)';

function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeout: number },
): Promise<{ ok: boolean; out: string; missing: boolean }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { ...opts, encoding: 'utf8', maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      const missing = (err as NodeJS.ErrnoException | null)?.code === 'ENOENT';
      resolve({ ok: !err, out: `${stdout}${stderr}`.trim() || (err ? err.message : ''), missing });
    });
  });
}

let built: Promise<{ binary?: string; why?: string }> | undefined;
let buildDir: string | undefined;

/** Removes the built program (also done at process exit; test workers may not see that). */
export function removeGoBuild(): void {
  if (buildDir) fs.rmSync(buildDir, { recursive: true, force: true });
  buildDir = undefined;
  built = undefined;
}

/** Builds bench/go-seed once per process into a temporary directory (removed at exit). */
export function buildGoSeed(): Promise<{ binary?: string; why?: string }> {
  built ??= (async () => {
    const version = await run('go', ['version'], { timeout: 30_000 });
    if (version.missing) return { why: NO_GO };
    if (!version.ok) return { why: `go does not run: ${version.out.split('\n')[0]}` };
    const dir = (buildDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ipallocator-go-seed-')));
    process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    const binary = path.join(dir, process.platform === 'win32' ? 'go-seed.exe' : 'go-seed');
    const env = {
      ...process.env,
      // standard library only: never reach for a module proxy or a newer toolchain
      GOPROXY: 'off',
      GOTOOLCHAIN: 'local',
      GOFLAGS: '',
      GOCACHE: process.env.GOCACHE ?? path.join(os.tmpdir(), 'ipallocator-go-cache'),
    };
    const b = await run('go', ['build', '-o', binary, '.'], { cwd: sourceDir, env, timeout: 300_000 });
    if (!b.ok) return { why: `go build failed: ${b.out.split('\n').slice(0, 3).join(' ')}` };
    return { binary };
  })();
  return built;
}

type Reply = Record<string, unknown> & { ok: boolean; error?: string };

/** One Go process: a map of names and both variants over it. Requests are answered in order. */
export class GoSession {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: { resolve(r: Reply): void; reject(e: Error): void }[] = [];
  private buffered = '';
  private exited: Error | undefined;
  private readonly dir: string;
  private readonly removeAtExit: () => void;
  private files = 0;
  /** Addresses loaded so far (the series order's prefix). */
  count = 0;
  /** The level whose queries were sent last. */
  queriesAt = -1;

  constructor(binary: string) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ipallocator-go-fill-'));
    // removed by close(), or at exit when the run ends first (an error, Ctrl-C: bench/run.ts)
    const dir = this.dir;
    this.removeAtExit = () => fs.rmSync(dir, { recursive: true, force: true });
    process.once('exit', this.removeAtExit);
    // A pinned harness starts Go with every CPU it was allowed (a child inherits the pin, and the Go
    // runtime would size itself for one CPU); Go pins its timing thread itself (time, `pin`).
    const pinned = BenchCpu.active;
    this.child =
      pinned?.cpu != null
        ? spawn('taskset', ['-c', pinned.allowed.join(','), binary], { stdio: ['pipe', 'pipe', 'pipe'] })
        : spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.buffered += chunk;
      let nl: number;
      while ((nl = this.buffered.indexOf('\n')) >= 0) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        const w = this.waiting.shift();
        if (!w) continue;
        try {
          w.resolve(JSON.parse(line) as Reply);
        } catch {
          w.reject(new Error(`go-seed answered something that is not JSON: ${line.slice(0, 200)}`));
        }
      }
    });
    let stderr = '';
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (s: string) => (stderr = (stderr + s).slice(-2000)));
    this.child.on('exit', (code, signal) => {
      const why = `go-seed exited (${signal ?? code})${stderr ? `: ${stderr.trim().split('\n').slice(-3).join(' ')}` : ''}`;
      // `signal` as on a child_process error: a stop signal there is Ctrl-C, not a failure (bench/stop.ts)
      this.exited = Object.assign(new Error(why), { signal });
      for (const w of this.waiting.splice(0)) w.reject(this.exited);
    });
    // a request written after the program exited (EPIPE): the 'exit' above rejects it
    this.child.stdin.on('error', () => {});
    this.child.on('error', (e) => {
      this.exited = e;
      for (const w of this.waiting.splice(0)) w.reject(e);
    });
  }

  /** Sends one command; resolves with the reply, rejects when it says ok: false. */
  request(line: string): Promise<Reply> {
    if (this.exited) return Promise.reject(this.exited);
    return new Promise<Reply>((resolve, reject) => {
      this.waiting.push({
        resolve: (r) => (r.ok ? resolve(r) : reject(new Error(`go-seed: ${r.error ?? 'failed'} (${line.split(' ')[0]})`))),
        reject,
      });
      this.child.stdin.write(`${line}\n`);
    });
  }

  /** Writes (hi, lo) offset pairs as little-endian u32 pairs to a file the Go side reads. */
  offsetsFile(pairs: Uint32Array): string {
    const b = Buffer.alloc(pairs.length * 4);
    for (let i = 0; i < pairs.length; i++) b.writeUInt32LE(pairs[i]!, 4 * i);
    const file = path.join(this.dir, `offsets-${this.files++}.bin`);
    fs.writeFileSync(file, b);
    return file;
  }

  async send(command: string, pairs: Uint32Array): Promise<Reply> {
    const file = this.offsetsFile(pairs);
    try {
      return await this.request(`${command} ${file}`);
    } finally {
      fs.rmSync(file, { force: true });
    }
  }

  /**
   * Times `op` of `variant` in Go on the budget `b` (one round's share of the case's) and returns
   * Go's samples; `decides`: whether an over-budget estimate may skip the case (its first round).
   */
  async time(variant: GoVariant, op: string, b: Budget, decides: boolean): Promise<Samples | Skipped> {
    // the budget decides whether the case runs; Go's loop is synchronous, so it samples for the
    // Benchmark.js time limit of synchronous cases when there is one
    const timeMs = b.maxTime > 0 ? Math.min(b.budgetMs, b.maxTime * 1000) : b.budgetMs;
    const sampleMs = b.sampleMs > 0 ? b.sampleMs : Math.min(40, Math.max(1, timeMs / 20));
    // Go skips when its estimate exceeds this; after the first round nothing is skipped
    const skipMs = decides ? b.budgetMs : Number.POSITIVE_INFINITY;
    // before every case, not only on a new CPU: Go moves the threads it started meanwhile off it
    const cpu = BenchCpu.active?.cpu ?? null;
    if (cpu !== null) await this.request(`pin ${cpu}`);
    const r = await this.request(
      `time ${variant} ${op} ${skipMs} ${timeMs} ${b.minSamples} ${Math.max(b.minSamples, b.maxSamples)} ${sampleMs}`,
    );
    if (typeof r.skipped === 'string') return { skipped: r.skipped };
    return { nsPerOp: r.samples as number[], opsPerSample: r.opsPerSample as number };
  }

  close(): void {
    if (!this.exited) this.child.stdin.end();
    process.off('exit', this.removeAtExit);
    this.removeAtExit();
  }
}

/** Opens a session on `cidr` (the caller closes it). */
export async function openGoSession(cidr: string, seed: number): Promise<GoSession> {
  const { binary, why } = await buildGoSeed();
  if (!binary) throw new Error(why);
  const s = new GoSession(binary);
  try {
    await s.request(`open ${cidr} ${seed >>> 0}`);
  } catch (e) {
    s.close();
    throw e;
  }
  return s;
}

// One session per series, shared by both variants; closed when the last of them closes.
const shared = new WeakMap<SeriesCtx, { session: Promise<GoSession>; users: number }>();

function sessionFor(ctx: SeriesCtx): Promise<GoSession> {
  let e = shared.get(ctx);
  if (!e) {
    e = { session: openGoSession(ctx.range.cidr, ctx.seed), users: 0 };
    shared.set(ctx, e);
  }
  e.users++;
  return e.session;
}

function releaseSession(ctx: SeriesCtx, s: GoSession): void {
  const e = shared.get(ctx);
  if (e && --e.users === 0) {
    shared.delete(ctx);
    s.close();
  }
}

const OPS = ['nextRelease', 'full', 'allocRelease', 'has'] as const;

export function goImpl(variant: GoVariant): Impl {
  return {
    name: variant,
    async available() {
      const { binary, why } = await buildGoSeed();
      if (!binary) return why;
      // functional check on a tiny range: 14 distinct addresses, then "range is full"
      try {
        const s = await openGoSession('192.168.7.0/28', 1);
        try {
          const r = await s.request(`trace ${variant} next 15`);
          const ips = r.ips as string[];
          if (new Set(ips).size !== 14 || r.error !== 'range is full') return `${variant} gives wrong answers on a /28`;
        } finally {
          s.close();
        }
      } catch (e) {
        return `${variant} does not run (${e instanceof Error ? e.message : String(e)})`;
      }
      return undefined;
    },
    applicable() {
      return undefined;
    },
    async open(ctx): Promise<SeriesImpl> {
      const s = await sessionFor(ctx);
      return {
        async fillTo(_from, to) {
          // the first variant loads the shared map; the second finds it loaded
          if (to > s.count) {
            await s.send('fill', ctx.pairs(s.count, to));
            s.count = to;
          }
        },
        async runners() {
          if (s.queriesAt !== s.count) {
            await s.send('queries free', ctx.freeQueries().pairs);
            await s.send('queries has', ctx.hasQueries().pairs);
            s.queriesAt = s.count;
          }
          const runner = (op: (typeof OPS)[number]): Runner => ({
            kind: 'self-timed',
            sample: (b, decides) => s.time(variant, op, b, decides),
          });
          return {
            nextRelease: runner('nextRelease'),
            full: runner('full'),
            allocRelease: runner('allocRelease'),
            has: runner('has'),
            close() {},
          };
        },
        close() {
          releaseSession(ctx, s);
        },
      };
    },
  };
}
