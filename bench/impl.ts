// What a benchmarked implementation gives the harness (bench/run.ts): its name, whether it can
// run here, and per series (one range, one fill order) the runners the harness times. The
// implementations themselves are in bench/impls.ts (and bench/go.ts for the Go ones).
import type { RangeSpec } from './ranges.ts';
import type { Budget, Samples, Skipped } from './measure.ts';

export type ImplName = 'reference' | 'go-seed' | 'go-master' | 'legacy-bitmap' | 'allocator' | 'store' | 'range' | 'core' | 'contiguous';
export const IMPL_NAMES: readonly ImplName[] = [
  'reference',
  'go-seed',
  'go-master',
  'legacy-bitmap',
  'allocator',
  'store',
  'range',
  'core',
  'contiguous',
];

/**
 * sync/async: n operations per call, timed by the harness; leaves the subject as it found it.
 * self-timed: the implementation times its own loop within the budget and returns its samples
 * (another process: go-seed).
 */
export type Runner =
  | { kind: 'sync'; run: (n: number) => void }
  | { kind: 'async'; run: (n: number) => Promise<void> }
  | { kind: 'self-timed'; sample: (share: Budget, decides: boolean) => Promise<Samples | Skipped> };

export interface Runners {
  /** allocateNext + release of what it returned (fill held constant). */
  nextRelease?: Runner;
  /** allocateNext on a full range: the "range is full" answer. */
  full?: Runner;
  /** allocate(ip) + release(ip) over a list of free addresses. */
  allocRelease?: Runner;
  /** has(ip) over a mix of taken and free addresses. */
  has?: Runner;
  /** Frees what the runners hold (an allocator built for this fill level). */
  close(): void;
}

/** What a series (one range, one fill order) gives its implementations. */
export interface SeriesCtx {
  readonly range: RangeSpec;
  /** The implementation's own store, grown by the harness to `count` records (those that read one only). */
  readonly store: unknown;
  /** Offsets currently taken: the first `count` of the series order, as (hi, lo) pairs. */
  pairs(from: number, to: number): Uint32Array;
  /** Free addresses for allocate+release at the current level: (hi, lo) pairs and text. */
  freeQueries(): { pairs: Uint32Array; text: string[] };
  /**
   * Up to `limit` free addresses at the current level (all of them where fewer are free), in
   * random order, as (hi, lo) pairs; the first 1,024 are freeQueries'. Made anew on each call.
   */
  freePairs(limit: number): Uint32Array;
  /** Half taken, half free, interleaved, for has(). */
  hasQueries(): { pairs: Uint32Array; text: string[] };
  /** Texts of the first `count` offsets (for implementations loaded through strings). */
  texts(from: number, to: number): string[];
  readonly seed: number;
}

export interface WarmHandle {
  close(): void;
  /** Bytes of WASM memory the new subject owns, if known. */
  wasmBytes?: number;
  /** Bytes of a JS structure of known size (e.g. the legacy bitmap), if any. */
  jsBytes?: number;
  note?: string;
}

export interface SeriesImpl {
  /** Brings the subject from `from` to `to` taken offsets (the series order's prefix). */
  fillTo(from: number, to: number): void | Promise<void>;
  /** Builds the runners at the current fill (may construct an allocator over the store). */
  runners(): Promise<Runners>;
  /**
   * Warm start: a fresh subject loaded with the current `count` addresses, timed by the caller.
   * Returns the function that frees it, plus what the new subject owns in WASM memory (bytes), if known.
   */
  warmStart?(count: number): Promise<WarmHandle>;
  /** Untimed preparation of the next warmStart (e.g. the address texts a store listing would give). */
  prepareWarm?(count: number): void;
  close(): void;
}

export interface Impl {
  /** An ImplName, or `<ImplName>@<git ref>` for a --baseline column. */
  readonly name: string;
  /** undefined when usable, else why not (module missing, placeholder core, …). */
  available(): Promise<string | undefined>;
  /** undefined when this range can be measured, else why not. */
  applicable(range: RangeSpec): string | undefined;
  open(ctx: SeriesCtx): Promise<SeriesImpl>;
}
