// --baseline <git-ref>: the previous implementation beside the current one, in the same run.
//
// The tree at <ref> is exported (`git archive`) into a temporary directory, which borrows this
// checkout's node_modules (a symlink) and builds its own WASM core there. The harness then loads
// THAT tree's bench adapters (its bench/impls.ts), which drive THAT tree's adapters/, and shows
// their rows as extra columns `allocator@<ref>`, `store@<ref>`, `range@<ref>`, `core@<ref>` on the
// same fills, seeds and budgets. Each version keeps its own MemoryStore, loaded through its own
// API, so a change of the store shows up in the columns that use it. The directory is removed
// when the run ends; nothing in this checkout changes.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { UsageError } from './args.ts';
import type { Impl, SeriesCtx, SeriesImpl } from './impl.ts';

/** The implementations a baseline contributes columns for. */
export const BASELINE_IMPLS = ['allocator', 'store', 'range', 'core'] as const;

/** What a baseline's store must offer the harness to load a fill. */
interface BaselineStore {
  createSync?(record: { name: string; labels: Readonly<Record<string, string>>; parentRef: null }): unknown;
  inject?(name: string, labels: Record<string, string>): unknown;
  close?(): void;
}

export interface Baseline {
  /** As given on the command line (the column suffix). */
  readonly ref: string;
  readonly commit: string;
  /** The baseline's implementations, renamed `<name>@<ref>`. */
  readonly impls: Impl[];
  /** A fresh store of the baseline's own MemoryStore class. */
  newStore(): BaselineStore;
  /** Adds records `names` of `family` to a store from newStore(), through its public API. */
  load(store: unknown, names: readonly string[], family: 'IPv4' | 'IPv6'): void;
}

function sh(cmd: string, args: string[], cwd: string, input?: Buffer): Buffer {
  return execFileSync(cmd, args, { cwd, input, maxBuffer: 1 << 30, stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
}

/**
 * The commit `ref` names in the repository at `repoRoot`; UsageError when it names none, which the
 * harness checks before it builds or measures anything.
 */
export function baselineCommit(ref: string, repoRoot: string): string {
  try {
    return sh('git', ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], repoRoot)
      .toString()
      .trim();
  } catch {
    throw new UsageError(`--baseline ${ref}: not a commit in this repository`);
  }
}

/** Exports `ref`, builds its WASM core and loads its bench adapters; throws with the reason. */
export async function prepareBaseline(ref: string, repoRoot: string, progress: (s: string) => void): Promise<Baseline> {
  const commit = baselineCommit(ref, repoRoot);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ipallocator-baseline-'));
  const modules = path.join(dir, 'node_modules');
  process.on('exit', () => {
    try {
      fs.unlinkSync(modules);
    } catch {
      // not created
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
  progress(`baseline ${ref} (${commit.slice(0, 10)}): exporting into ${dir}`);
  sh('tar', ['-x', '-C', dir], repoRoot, sh('git', ['archive', '--format=tar', commit], repoRoot));
  if (!fs.existsSync(path.join(dir, 'bench', 'impls.ts'))) throw new Error(`--baseline ${ref}: that tree has no bench/impls.ts`);
  fs.symlinkSync(path.join(repoRoot, 'node_modules'), modules, 'dir');
  progress(`baseline ${ref}: building its WASM core`);
  try {
    sh('npm', ['run', '--silent', 'build:wasm'], dir);
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string };
    throw new Error(
      `--baseline ${ref}: its WASM build failed: ${(err.stderr?.toString() || err.message).trim().split('\n').slice(-3).join(' ')}`,
      { cause: e }, // its `signal` tells a build that Ctrl-C ended (bench/stop.ts)
    );
  }
  const load = async (rel: string): Promise<Record<string, unknown>> =>
    (await import(pathToFileURL(path.join(dir, rel)).href)) as Record<string, unknown>;
  const theirs = (await load('bench/impls.ts')).IMPLS as readonly Impl[] | undefined;
  if (!Array.isArray(theirs)) throw new Error(`--baseline ${ref}: its bench/impls.ts exports no IMPLS`);
  const storeMod = await load('adapters/memory-store.ts');
  const StoreCtor = storeMod.MemoryStore as (new () => BaselineStore) | undefined;
  if (typeof StoreCtor !== 'function') throw new Error(`--baseline ${ref}: its adapters/memory-store.ts has no MemoryStore`);
  const records = await load('adapters/records.ts').catch(() => undefined);
  const labelsFor = records?.labelsFor as ((f: 'IPv4' | 'IPv6') => Readonly<Record<string, string>>) | undefined;
  const labelsOf = (family: 'IPv4' | 'IPv6'): Readonly<Record<string, string>> =>
    labelsFor?.(family) ??
    Object.freeze({ 'ipaddress.kubernetes.io/ip-family': family, 'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io' });

  const impls = theirs.filter((i) => (BASELINE_IMPLS as readonly string[]).includes(i.name)).map((i) => renamed(i, `${i.name}@${ref}`));
  return {
    ref,
    commit,
    impls,
    newStore: () => new StoreCtor(),
    load(store, names, family) {
      const s = store as BaselineStore;
      const labels = labelsOf(family);
      if (typeof s.createSync === 'function') for (const name of names) s.createSync({ name, labels, parentRef: null });
      else if (typeof s.inject === 'function') for (const name of names) s.inject(name, { ...labels });
      else throw new Error(`--baseline ${ref}: its MemoryStore has neither createSync nor inject`);
    },
  };
}

/** The same implementation under another column name. */
function renamed(impl: Impl, name: string): Impl {
  return {
    name,
    available: () => impl.available(),
    applicable: (r) => impl.applicable(r),
    open: (ctx: SeriesCtx): Promise<SeriesImpl> => impl.open(ctx),
  };
}
