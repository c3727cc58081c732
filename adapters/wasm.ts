// The one boundary between TypeScript and the WebAssembly core (core-as/).
//
// - The module is compiled and instantiated once, synchronously, when this file is first imported
//   (the binary travels as base64 in adapters/generated/core-wasm.inline.ts, made by
//   `npm run build:wasm`; see scripts/build-wasm.mjs). No file or network access is needed, so it
//   works the same in Node, Deno, vitest and bundlers.
// - Every export of the core is typed in `CoreExports` below and reached through `core`; nothing
//   else in adapters/ instantiates the module or touches its memory except through `memoryU8`,
//   `memoryU32` and `scratch()`. The modules that wrap the core's objects (free-index.ts,
//   space.ts, geometry.ts) call `core` directly. Addresses cross as four u32 words (w0 = bits
//   127..96), u64 offsets as (hi, lo) u32 pairs, so no BigInt and no allocation happens per call.
// - Results wider than one i32 come back through one static scratch window (`scratch()`), which
//   every call may overwrite: read it right after the call.
// - The core returns status codes (core-as/status.ts); callers turn failures into typed errors.
// - Every number both sides must agree on (status codes, index kinds, bands, the scratch window's
//   size and layout, limits) is a constant of the core, exported as an immutable global and read
//   once here (`coreConstant`): the TypeScript side never repeats one, so they cannot drift. After
//   instantiation they are plain numbers; no call pays for them.
import { WASM_BASE64, WASM_TARGET } from './generated/core-wasm.inline.ts';
import { InvalidArgumentError, IPAllocatorError, type MemoryShortage, OutOfMemoryError } from './errors.ts';
import { thrownText } from './input.ts';
import { formatCount, quoteInput } from './quote.ts';

/**
 * Every function the core exports. Pointers and handles are byte offsets into `memory`.
 * @internal (stripped from the published .d.ts: public types name no WebAssembly type)
 */
export interface CoreExports {
  readonly memory: WebAssembly.Memory;
  scratch_ptr(): number;
  // heap (core-as/heap.ts)
  heap_set_limit_pages(pages: number): void;
  heap_limit_pages(): number;
  heap_bytes_in_use(): number;
  heap_small_bytes_free(): number;
  /** The last failed request (core-as/heap.ts): the bytes it asked for, its HEAP_FAIL_* reason, the bytes then free below the cap. */
  heap_failed_bytes(): number;
  heap_failed_reason(): number;
  heap_bytes_free(): number;
  /** Failures recorded so far (wrapping u32): unchanged, heap_failed_* describe the same failure. */
  heap_failures(): number;
  /** The block the last failure could not get, in bytes. */
  heap_failed_block(): number;
  /** The largest free piece of 4 KiB or more when the last failure was recorded (0 when none). */
  heap_failed_largest(): number;
  /** Bytes free for blocks under 4 KiB only when the last failure was recorded. */
  heap_failed_small_free(): number;
  /** 0 when the heap's invariants hold (core-as/heap.ts), else the number of the first that fails. For tests. */
  heap_validate(): number;
  buf_alloc(size: number): number;
  buf_free(ptr: number, size: number): void;
  // free-address index (core-as/freeindex.ts)
  index_new(kind: number, nHi: number, nLo: number): number;
  index_kind(h: number): number;
  index_free(h: number): void;
  index_set(h: number, hi: number, lo: number): number;
  index_clear(h: number, hi: number, lo: number): number;
  index_has(h: number, hi: number, lo: number): number;
  index_count(h: number): number;
  index_next_free(h: number, sHi: number, sLo: number, loHi: number, loLo: number, hiHi: number, hiLo: number): number;
  index_take_free(h: number, sHi: number, sLo: number, loHi: number, loLo: number, hiHi: number, hiLo: number): number;
  index_next_set(h: number, fromHi: number, fromLo: number): number;
  index_bytes(h: number): number;
  index_validate(h: number): number;
  index_compact(h: number): void;
  index_set_many(h: number, ptr: number, count: number): number;
  /** The k-th free offset of [lo, hi] → scratch 0..1: OK, or NONE (k or fewer free). Sparse: hi < n. */
  index_select_free(h: number, kHi: number, kLo: number, loHi: number, loLo: number, hiHi: number, hiLo: number): number;
  /** Free offsets in [lo, hi] → scratch 0..1 as (hi, lo); returns OK. Sparse: hi < n. */
  index_count_free(h: number, loHi: number, loLo: number, hiHi: number, hiLo: number): number;
  /**
   * For tests: singles node p of a sparse index → scratch words 0..5 (node count, slots, key
   * slots, keys, its last key's slot and that key's home slot). OK, or NONE past the last node.
   */
  sparse_singles_node(h: number, p: number): number;
  /** Bytes a sparse index may grow by when `count` more offsets, spread as its isolated ones are, are set; 0 for a dense one. */
  sparse_growth_bound(h: number, count: number): number;
  /** Bytes free below the cap in pieces that can hold a sparse index's largest node (64 KiB). */
  sparse_free_for_nodes(): number;
  // ── dense index extras (core-as/dense.ts) ──
  /** Address of a dense index's level-0 words (u64 little-endian; bit i = offset i). */
  dense_words_ptr(h: number): number;
  /** Number of level-0 words: ceil(n / 64). */
  dense_word_count(h: number): number;
  /** After the host wrote level-0 words: clears bits ≥ n, recomputes summaries and count; returns the count. */
  dense_rebuild(h: number): number;
  /** index_next_free for a dense handle (u32 offsets): the offset, or −1 when the band has none. */
  dense_next_free32(h: number, start: number, lo: number, hi: number): number;
  dense_take_free32(h: number, start: number, lo: number, hi: number): number;
  // ── a range's address space (core-as/space.ts): index + geometry; addresses as four u32 words ──
  /** A handle, 0 when out of memory (or n = 0, or the kind cannot hold n). */
  space_new(
    kind: number,
    f0: number,
    f1: number,
    f2: number,
    f3: number,
    nHi: number,
    nLo: number,
    rangeOffset: number,
    width: number,
  ): number;
  space_free(s: number): void;
  /** The space's index handle, for the index_* functions. */
  space_index(s: number): number;
  /** Find from the band's start + d, mark, address → scratch 0..3: OK, NONE (band full), OUT_OF_MEMORY. */
  space_take(s: number, band: number, dHi: number, dLo: number): number;
  /** The same search from the address after (w0..w3): OK, NONE, OUT_OF_MEMORY, OUT_OF_RANGE. */
  space_take_after(s: number, band: number, w0: number, w1: number, w2: number, w3: number): number;
  /** OK newly set, NONE already, OUT_OF_RANGE (not in [first, last]), OUT_OF_MEMORY. */
  space_set(s: number, w0: number, w1: number, w2: number, w3: number): number;
  /** OK was taken, NONE, OUT_OF_RANGE, OUT_OF_MEMORY (a sparse run split). */
  space_clear(s: number, w0: number, w1: number, w2: number, w3: number): number;
  /** 1 taken, 0 free or not in [first, last]. */
  space_has(s: number, w0: number, w1: number, w2: number, w3: number): number;
  /** Offset (hi, lo) → scratch 0..1: OK or OUT_OF_RANGE. */
  space_offset(s: number, w0: number, w1: number, w2: number, w3: number): number;
  /** Address of offset (hi, lo) → scratch 0..3: OK or OUT_OF_RANGE. */
  space_address(s: number, oHi: number, oLo: number): number;
  /** `count` addresses (4 words each) at ptr, set in one call: newly set, OUT_OF_RANGE, OUT_OF_MEMORY. */
  space_set_many(s: number, ptr: number, count: number): number;
  // ── 128-bit address math, prefix geometry, iterator (core-as/u128.ts, prefix.ts, iter.ts) ──
  // Addresses as four u32 words (w0 = bits 127..96), width 32 (IPv4) or 128 (IPv6); results in
  // scratch (address: words 0..3, u64: words 0..1; prefix_geometry: words 0..25, see GEO in
  // adapters/geometry.ts). Each returns a status unless noted.
  u128_add(w0: number, w1: number, w2: number, w3: number, offHi: number, offLo: number, width: number): number;
  u128_sub(a0: number, a1: number, a2: number, a3: number, b0: number, b1: number, b2: number, b3: number): number;
  /** −1, 0, 1 (not a status). */
  u128_cmp(a0: number, a1: number, a2: number, a3: number, b0: number, b1: number, b2: number, b3: number): number;
  u128_next(w0: number, w1: number, w2: number, w3: number, width: number): number;
  u128_prev(w0: number, w1: number, w2: number, w3: number, width: number): number;
  prefix_geometry(w0: number, w1: number, w2: number, w3: number, bits: number, width: number): number;
  prefix_hosts(bits: number, width: number): number;
  /** The static band size 0..256, or OUT_OF_RANGE (not written to scratch). */
  prefix_range_offset(bits: number, width: number): number;
  iter_start(
    f0: number,
    f1: number,
    f2: number,
    f3: number,
    l0: number,
    l1: number,
    l2: number,
    l3: number,
    offHi: number,
    offLo: number,
    width: number,
  ): number;
  iter_step(
    c0: number,
    c1: number,
    c2: number,
    c3: number,
    f0: number,
    f1: number,
    f2: number,
    f3: number,
    l0: number,
    l1: number,
    l2: number,
    l3: number,
    s0: number,
    s1: number,
    s2: number,
    s3: number,
  ): number;
}

/** Raised when the core traps (an assertion in a debug build, or a bug): never expected. @internal */
export class CoreAbortError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CoreAbortError';
  }
}

function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function readAsString(memory: WebAssembly.Memory, ptr: number): string {
  // AssemblyScript strings: UTF-16, byte length stored 4 bytes before the data.
  if (!ptr) return '';
  const len = new Uint32Array(memory.buffer, ptr - 4, 1)[0]! >>> 1;
  return String.fromCharCode(...new Uint16Array(memory.buffer, ptr, len));
}

/**
 * What to say when the runtime offers no WebAssembly, naming the flags that remove it in the
 * runtime at hand: Node's `--jitless` (given on the command line or in NODE_OPTIONS) and
 * `--no-expose-wasm` (on the command line only: NODE_OPTIONS refuses it), Deno's `--v8-flags=--jitless` (or DENO_V8_FLAGS; Deno's V8 has no
 * --no-expose-wasm). Deno is told by its global `Deno`, checked first since Deno has a `process`
 * with `versions.node` too; Node by `process.versions.node` without Bun's `versions.bun`. Any other
 * runtime is named no flag, as none of these is its.
 */
function noWebAssembly(): string {
  const said = 'ipallocator needs WebAssembly, which';
  const g = globalThis as { Deno?: { version?: { deno?: unknown } }; process?: { versions?: { node?: unknown; bun?: unknown } } };
  if (typeof g.Deno?.version?.deno === 'string') {
    return `${said} this Deno process does not offer (started with --v8-flags=--jitless, or DENO_V8_FLAGS=--jitless?)`;
  }
  const versions = g.process?.versions;
  if (typeof versions?.node === 'string' && versions.bun === undefined) {
    return `${said} this Node process does not offer (started with --jitless, on the command line or in NODE_OPTIONS, or with --no-expose-wasm?)`;
  }
  return `${said} this JavaScript runtime does not offer`;
}

let memoryRef: WebAssembly.Memory | undefined;
// Without WebAssembly (node --jitless or --no-expose-wasm, deno --v8-flags=--jitless, a host that
// removes it) the import would otherwise end in a bare ReferenceError naming no cause.
if (typeof WebAssembly !== 'object' || WebAssembly === null) throw new IPAllocatorError(noWebAssembly());
// An engine with WebAssembly can still refuse the core, and would end the import in its own
// bare error (a RangeError, a CompileError) that names no cause and no remedy; the command line
// would print it as an internal error, with a stack trace. Compiling is refused where the host
// forbids it. The instance is refused its memory where the address space cannot be reserved:
// V8 reserves 10 GiB per WebAssembly memory for its guard regions, so under `ulimit -v` below
// about 11 GiB every one fails in Node (Deno does not start at all there).
let wasmModule: WebAssembly.Module;
try {
  wasmModule = new WebAssembly.Module(decodeBase64(WASM_BASE64));
} catch (e) {
  // V8 says "disallowed by embedder" where the host forbids it; anything else is the engine's own
  // failure (a WebAssembly feature the core uses that it lacks), which no setting of the host mends
  const forbidden = /disallowed/i.test(thrownText(e));
  throw coreRefused(
    forbidden
      ? `ipallocator cannot compile its WebAssembly core here (${thrownText(e)}): the host forbids compiling WebAssembly, ` +
          "as a Content-Security-Policy without 'wasm-unsafe-eval' or a node:vm context made with codeGeneration: { wasm: false } does"
      : `ipallocator cannot compile its WebAssembly core here (${thrownText(e)}): this JavaScript engine cannot compile it; ` +
          'ipallocator runs on Node 20 or later and Deno 2',
    e,
  );
}
let instance: WebAssembly.Instance;
try {
  instance = new WebAssembly.Instance(wasmModule, {
    env: {
      abort(msg: number, file: number, line: number, col: number): never {
        const m = memoryRef!;
        throw new CoreAbortError(`core-as abort: ${readAsString(m, msg)} at ${readAsString(m, file)}:${line}:${col}`);
      },
    },
  });
} catch (e) {
  if (!(e instanceof RangeError)) throw e; // the core's own start function failing: a bug, shown as it is
  throw coreRefused(
    `ipallocator cannot start its WebAssembly core: the JavaScript engine refused it its memory (${thrownText(e)}). ` +
      'A limit on virtual memory (ulimit -v) below about 11 GiB does that in Node, whose WebAssembly memories each reserve ' +
      '10 GiB of address space: raise or lift the limit, or start node with --disable-wasm-trap-handler, which reserves none',
    e,
  );
}

/** The import's error when the engine refuses the core: an IPAllocatorError, the engine's error as its `cause`. */
function coreRefused(message: string, engineError: unknown): IPAllocatorError {
  const error = new IPAllocatorError(message);
  Object.defineProperty(error, 'cause', { value: engineError, writable: true, configurable: true });
  return error;
}

/** The core's exports. @internal */
export const core = instance.exports as unknown as CoreExports;
memoryRef = core.memory;

/** The constants the core exports (immutable globals of core-as/index.ts). @internal */
export type CoreConstant =
  | 'OK'
  | 'NONE'
  | 'OUT_OF_RANGE'
  | 'OUT_OF_MEMORY'
  | 'TOO_FAR'
  | 'HEAP_FAIL_LIMIT'
  | 'HEAP_FAIL_FRAGMENTED'
  | 'HEAP_FAIL_HOST'
  | 'KIND_AUTO'
  | 'KIND_DENSE'
  | 'KIND_SPARSE'
  | 'DENSE_MAX_SLOTS'
  | 'DENSE_MAX_OFFSETS'
  | 'BAND_UPPER'
  | 'BAND_LOWER'
  | 'SCRATCH_WORDS'
  | 'GEO_NETWORK'
  | 'GEO_BROADCAST'
  | 'GEO_FIRST'
  | 'GEO_LAST'
  | 'GEO_OFFSET_ADDRESS'
  | 'GEO_SIZE'
  | 'GEO_RANGE_OFFSET'
  | 'GEO_FLAGS'
  | 'GEO_COUNT'
  | 'FLAG_NO_FIRST'
  | 'FLAG_NO_LAST'
  | 'FLAG_COUNT_SATURATED';

/**
 * A constant of the core, as a number (a u64 one too: each is below 2^53). Read once, at module
 * evaluation: a missing one means a core built from other sources, which fails loudly here.
 * @internal
 */
export function coreConstant(name: CoreConstant): number {
  const global = (instance.exports as Record<string, unknown>)[name];
  if (!(global instanceof WebAssembly.Global))
    throw new CoreAbortError(`the core exports no constant ${name}: rebuild it (npm run build:wasm)`);
  return Number(global.value);
}

/** Status codes of core-as/status.ts. @internal */
export const OK = coreConstant('OK');
/** @internal */
export const NONE = coreConstant('NONE');
/** @internal */
export const OUT_OF_RANGE = coreConstant('OUT_OF_RANGE');
/** @internal */
export const OUT_OF_MEMORY = coreConstant('OUT_OF_MEMORY');
/** @internal */
export const TOO_FAR = coreConstant('TOO_FAR');

/** The bands of core-as/space.ts: BAND_UPPER is the dynamic band, BAND_LOWER the static band (KEP-3070). @internal */
export const BAND_UPPER = coreConstant('BAND_UPPER');
/** @internal */
export const BAND_LOWER = coreConstant('BAND_LOWER');

/** Index kinds of core-as/freeindex.ts. @internal */
export const KIND_AUTO = coreConstant('KIND_AUTO');
/** @internal */
export const KIND_DENSE = coreConstant('KIND_DENSE');
/** @internal */
export const KIND_SPARSE = coreConstant('KIND_SPARSE');

/** Which build of the core is loaded: "release" or "debug" (assertions kept). @internal */
export const coreTarget: string = WASM_TARGET;

const SCRATCH_PTR = core.scratch_ptr();
const SCRATCH_WORDS = coreConstant('SCRATCH_WORDS');
let scratchView = new Uint32Array(core.memory.buffer, SCRATCH_PTR, SCRATCH_WORDS);

/**
 * The scratch window as SCRATCH_WORDS (32) u32 words. Valid until the next core call; re-created when a
 * `memory.grow` detached the previous view.
 * @internal
 */
export function scratch(): Uint32Array {
  // A detached view has length 0: checked by length, which is cheap.
  if (scratchView.length === 0) scratchView = new Uint32Array(core.memory.buffer, SCRATCH_PTR, SCRATCH_WORDS);
  return scratchView;
}

/**
 * `call(ptr, n)` over `count` entries of `width` u32 words from `words`, copied into the scratch
 * window as many at a time as it holds: for a core call that needs no memory of its own (marking
 * offsets or addresses in a dense index) where no block for the whole batch could be had, so
 * that such a load never fails for want of memory — the index holds every bit from its creation.
 * Returns the answers added up, or the first status below 0, with the position the core wrote to
 * scratch word 0 made the whole batch's. The slices before it stay marked: as dense_set_many
 * leaves the entries before a failing one in one batch, not as space_set_many, which checks every
 * address first (AddressSpace.setMany checks them before its slices).
 * @internal
 */
export function inScratchSlices(words: Uint32Array, width: number, count: number, call: (ptr: number, n: number) => number): number {
  const step = Math.floor(SCRATCH_WORDS / width);
  let total = 0;
  for (let from = 0; from < count; from += step) {
    const n = Math.min(step, count - from);
    scratch().set(words.subarray(from * width, (from + n) * width));
    const r = call(SCRATCH_PTR, n);
    if (r < 0) {
      scratch()[0]! += from;
      return r;
    }
    total += r;
  }
  return total;
}

let u32View = new Uint32Array(core.memory.buffer);
/** A Uint32Array over all of linear memory (index = byte offset >> 2), refreshed after growth. @internal */
export function memoryU32(): Uint32Array {
  if (u32View.length === 0 || u32View.buffer !== core.memory.buffer) u32View = new Uint32Array(core.memory.buffer);
  return u32View;
}

let u8View = new Uint8Array(core.memory.buffer);
/** A Uint8Array over all of linear memory, refreshed after growth. @internal */
export function memoryU8(): Uint8Array {
  if (u8View.length === 0 || u8View.buffer !== core.memory.buffer) u8View = new Uint8Array(core.memory.buffer);
  return u8View;
}

const WASM_PAGE_BYTES = 65536;
/** wasm32 memory at most: 65536 pages of 64 KiB, 4 GiB; the limit with no cap set. */
const MAX_MEMORY_PAGES = 65536;
const MAX_MEMORY_BYTES = MAX_MEMORY_PAGES * WASM_PAGE_BYTES;

/**
 * Caps the core's linear memory at `bytes`, a whole number of 64 KiB pages (a multiple of 65536);
 * never below what the memory already holds, since WebAssembly memory cannot shrink. Allocations
 * that would grow past the cap fail with OutOfMemoryError and leave every address as it was (a
 * sparse index may keep some of the memory a refused batch grew it into, which the same batch
 * needs again: the error's message says how much). `Infinity` (or any
 * number from 4 GiB up) lifts the cap to WebAssembly's own 4 GiB. Any other number of bytes is
 * InvalidArgumentError naming the nearest multiples, and the cap stays as it was: a cap is the
 * most the memory may take, so rounding up would exceed it, and rounding down in silence would
 * make memoryLimit().limit differ from what was set. The instance, and so the cap, is shared by
 * every allocator in the process.
 *
 * Memory freed by destroy() is reused: freed blocks of 4 KiB and more merge with their free
 * neighbours, so the memory of one index destroyed can hold an index of another shape. Blocks
 * under 4 KiB are cut from 4 KiB blocks of one size, which merge again once all their small
 * blocks are free; while one of them is alive, the rest serve its size only.
 */
export function setMemoryLimit(bytes: number): void {
  if (typeof bytes !== 'number' || Number.isNaN(bytes) || bytes < 0) {
    throw new InvalidArgumentError(`memory limit must be a non-negative number of bytes, got ${quoteInput(bytes)}`);
  }
  if (bytes >= MAX_MEMORY_BYTES) {
    core.heap_set_limit_pages(MAX_MEMORY_PAGES);
    return;
  }
  if (bytes % WASM_PAGE_BYTES !== 0) {
    const below = Math.floor(bytes / WASM_PAGE_BYTES) * WASM_PAGE_BYTES;
    throw new InvalidArgumentError(
      `memory limit must be a multiple of ${formatCount(WASM_PAGE_BYTES)} bytes (WebAssembly memory comes in pages of 64 KiB), got ${quoteInput(bytes)}; the nearest are ${formatCount(below)} and ${formatCount(below + WASM_PAGE_BYTES)}`,
    );
  }
  core.heap_set_limit_pages(bytes / WASM_PAGE_BYTES);
}

/**
 * The current cap in bytes, the bytes the core's memory holds now (it never shrinks), and the
 * bytes of it in use by live indexes (what destroy() gives back for reuse).
 */
export function memoryLimit(): { limit: number; size: number; inUse: number } {
  return { limit: core.heap_limit_pages() * WASM_PAGE_BYTES, size: core.memory.buffer.byteLength, inUse: core.heap_bytes_in_use() };
}

/** Why the core's last request for memory failed (core-as/heap.ts, heap_failed_reason). @internal */
export const HEAP_FAIL_LIMIT = coreConstant('HEAP_FAIL_LIMIT');
/** @internal */
export const HEAP_FAIL_FRAGMENTED = coreConstant('HEAP_FAIL_FRAGMENTED');
/** @internal */
export const HEAP_FAIL_HOST = coreConstant('HEAP_FAIL_HOST');

/** The core's reasons, as OutOfMemoryError names them. */
const SHORTAGES: ReadonlyMap<number, MemoryShortage> = new Map([
  [HEAP_FAIL_LIMIT, 'limit'],
  [HEAP_FAIL_FRAGMENTED, 'fragmented'],
  [HEAP_FAIL_HOST, 'host'],
]);

/** What each error of wasmOutOfMemory was doing, and which failure of the core it reports (remeasured). */
const reported = new WeakMap<OutOfMemoryError, { what: string; failure: number; estimate: LoadEstimate | undefined; about: boolean }>();

/**
 * A load into an index that ran out: the addresses it had loaded and those it had not (`left`),
 * the most bytes per address its index can need (`perAddress`), and, for a live index whose
 * addresses were taken back, the bytes it grew into and kept (`kept`, 0 for a new index, dropped).
 * wasmOutOfMemory adds `left` times the larger of `perAddress` and what the index held per
 * address loaded when it ran out to what the load reached, and counts at least `perAddress` for
 * every address of the load, so that `requested` estimates the whole load's need. What reached
 * counts is what was given back: memory kept is in use already, and the same load uses it
 * again, so it is not needed twice.
 * @internal
 */
export interface LoadEstimate {
  readonly loaded: number;
  readonly left: number;
  readonly perAddress: number;
  readonly kept?: number;
  /**
   * For a live sparse index whose addresses were taken back: what its nodes may grow by when all
   * of the load's addresses are set again (FreeIndex.growthBound, read after the undo, so what
   * it kept is counted as there). Addresses spread apart reach every node in proportion to its
   * keys, so nodes filled together grow together: the next addresses can cost many times what
   * the index held per address so far. `requested` is at least this.
   */
  readonly spread?: number;
  /**
   * What the whole call needs, counted from what it leaves behind rather than from the addresses
   * it reached (a releaseMany: its clears split runs into runs and isolated addresses, which the
   * index then holds one by one), and how it was counted, for the message. `requested` is this,
   * less what the index grew into and keeps, and never less than what the call reached.
   */
  readonly counted?: { readonly bytes: number; readonly how: string };
}

/**
 * The bytes per address and in all that `estimate` adds to `reached` (the failing block in it);
 * `basis`: 'whole' when the bytes are those of every address of the load at
 * `estimate.perAddress`, 'spread' when they make `reached` up to `estimate.spread`, 'rest'
 * when they are the addresses not reached at `perAddress`, 'counted' when they make `reached`
 * up to `estimate.counted` (and then they may be 0: what it reached was all).
 */
function estimated(
  estimate: LoadEstimate | undefined,
  reached: number,
): { perAddress: number; bytes: number; basis: 'rest' | 'whole' | 'spread' | 'counted' } {
  if (estimate === undefined) return { perAddress: 0, bytes: 0, basis: 'rest' };
  const kept = estimate.kept ?? 0;
  if (estimate.counted !== undefined)
    return { perAddress: 0, bytes: Math.max(0, estimate.counted.bytes - kept - reached), basis: 'counted' };
  // what the load had grown the index by when it ran out: given back since, or kept
  const held = Math.max(0, reached - core.heap_failed_block()) + kept;
  const perAddress = Math.max(estimate.perAddress, estimate.loaded === 0 ? 0 : Math.ceil(held / estimate.loaded));
  const rest = perAddress * estimate.left;
  // the index's nodes grow in steps, many of them at once late in a load: what it held per
  // address so far can be well below what the last addresses cost
  const whole = estimate.perAddress * (estimate.loaded + estimate.left) - kept - reached;
  const spread = (estimate.spread ?? 0) - reached;
  if (spread > whole && spread > rest) return { perAddress, bytes: spread, basis: 'spread' };
  return whole > rest ? { perAddress: estimate.perAddress, bytes: whole, basis: 'whole' } : { perAddress, bytes: rest, basis: 'rest' };
}

/**
 * The OutOfMemoryError for a core call that found no memory while `what`: the bytes the whole
 * operation needed, and what stood in the way, with what to do (memoryAdvice). Every failure of
 * the core to get memory is reported through this. It reads the core's record of its last
 * failure and the memory free and in use at that moment, so that `free + inUse` is the limit
 * less the core's own bookkeeping: call it once the failing call has given back what it took (a
 * buffer of the host's for it included), and, where the operation gives back more after that (an
 * allocateMany undoing its earlier takes, a new index dropped), measure again there with
 * remeasured(). With `estimate` (a load into a new index that stopped part-way), `requested` is
 * what the load reached plus the estimate's bytes, and the message says it is an estimate.
 * `packed`: bytes given back since that were in use before the operation began (a compaction
 * packing pages it did not split), which it did not need.
 * @internal
 */
export function wasmOutOfMemory(what: string, estimate?: LoadEstimate, packed = 0): OutOfMemoryError {
  const { limit, inUse } = memoryLimit();
  const reached = Math.max(core.heap_failed_block(), core.heap_failed_bytes() - packed);
  const more = estimated(estimate, reached);
  const free = core.heap_bytes_free();
  // a live sparse index's growth is mostly nodes of 64 KiB: free pieces too small for one are
  // counted as needed too, so that a cap raised by requested - free gives the nodes room
  const unusable = estimate?.spread === undefined ? 0 : Math.max(0, free - core.sparse_free_for_nodes());
  const requested = reached + more.bytes + unusable;
  // the core names 'fragmented' when what the failing call needed was free in all; the whole
  // load's estimate may not be
  const failed = SHORTAGES.get(core.heap_failed_reason()) ?? 'limit';
  const reason = failed === 'fragmented' && free < requested ? 'limit' : failed;
  const details = { requested, reason, limit, free, inUse };
  const asked =
    more.basis === 'counted'
      ? `needs about ${bytesText(requested)} (an estimate: ${estimate!.counted!.how}${kept(estimate!)}${tooSmall(unusable)})`
      : more.bytes === 0
        ? `asked for ${bytesText(requested)}`
        : more.basis === 'spread'
          ? `needs about ${bytesText(requested)} (an estimate: what the index may grow by when the ${formatCount(estimate!.loaded + estimate!.left)} addresses it loads are set, its nodes filled together growing together${kept(estimate!)}${tooSmall(unusable)})`
          : more.basis === 'whole'
            ? `needs about ${bytesText(requested)} (an estimate: up to ${formatCount(more.perAddress)} bytes for each of the ${formatCount(estimate!.loaded + estimate!.left)} addresses it loads${kept(estimate!)}${tooSmall(unusable)})`
            : `needs about ${bytesText(requested)} (an estimate: the ${bytesText(reached)} it reached when it ran out${kept(estimate!)}, and ${formatCount(more.perAddress)} bytes for each of the ${formatCount(estimate!.left)} addresses it had not reached${tooSmall(unusable)})`;
  const error = new OutOfMemoryError(`${what} ${asked}; ${memoryAdvice(details, true)}`, details);
  reported.set(error, { what, failure: core.heap_failures(), estimate, about: more.bytes !== 0 || more.basis === 'counted' });
  return error;
}

/** The part of an estimate's message on the free memory in pieces too small for a sparse index's nodes. */
function tooSmall(bytes: number): string {
  return bytes === 0 ? '' : `, counting the ${bytesText(bytes)} free in pieces too small for its nodes of 64 KiB`;
}

/** The part of an estimate's message on the memory a live index grew into and kept. */
function kept(estimate: LoadEstimate): string {
  const bytes = estimate.kept ?? 0;
  return bytes === 0 ? '' : ` (besides the ${bytesText(bytes)} the index grew into and keeps, in use already)`;
}

/**
 * What stood in the way of `d` (an OutOfMemoryError's details) and what to do, as every
 * OutOfMemoryError's message says it: the cap set with setMemoryLimit and its value (or, with no
 * cap set, WebAssembly's own 4 GiB), the memory in use and free below it, free memory in pieces
 * too small (with `atFailure`, the core's record of the failure just reported: which pieces
 * there were), or a host that refused to grow the memory.
 */
function memoryAdvice(d: { reason: MemoryShortage; limit: number; inUse: number; free: number }, atFailure: boolean): string {
  const { limit, inUse, free } = d;
  const capped = limit < MAX_MEMORY_BYTES;
  const theLimit = capped
    ? `the WebAssembly memory cap set with setMemoryLimit is ${bytesText(limit)}`
    : `no memory cap is set (setMemoryLimit): WebAssembly's own limit is ${bytesText(MAX_MEMORY_BYTES)}`;
  const destroy = 'destroy() what you no longer need';
  const act = capped ? `raise the cap with setMemoryLimit(bytes), lift it with setMemoryLimit(Infinity), or ${destroy}` : destroy;
  if (d.reason === 'host') {
    return `${theLimit}, with ${bytesText(inUse)} in use, but the host refused to grow the memory past ${bytesText(core.memory.buffer.byteLength)}: ${destroy}, or give the process more memory`;
  }
  if (d.reason === 'fragmented') {
    if (!atFailure) {
      return `${theLimit}, with ${bytesText(inUse)} in use and ${bytesText(free)} free below it, but in pieces: when it failed, none of them could hold one of its blocks; ${act} (freed neighbours merge into larger pieces)`;
    }
    // the pieces as they were when it failed, beside the blocks the operation held then (given
    // back since, they may have merged into larger ones)
    const block = core.heap_failed_block();
    const largest = core.heap_failed_largest();
    const small = core.heap_failed_small_free();
    const pieces = largest === 0 ? 'no free piece of 4 KiB or more' : `the largest free piece held ${bytesText(largest)}`;
    const held = small === 0 ? '' : `; ${bytesText(small)} free held for blocks of other sizes under 4 KiB only`;
    return `${theLimit}, with ${bytesText(inUse)} in use and ${bytesText(free)} free below it, but in pieces: when it failed, none of them could hold its block of ${bytesText(block)} (${pieces}${held}); ${act} (freed neighbours merge into larger pieces)`;
  }
  // Blocks under 4 KiB are cut from 4 KiB blocks that serve only their size while any of their
  // blocks is alive: memory that held many small indexes, a few of them kept, can be free in
  // name and still unusable for a large one.
  const small = core.heap_small_bytes_free();
  const held = small >= 64 * 1024 ? `, ${bytesText(small)} of that held for blocks under 4 KiB only (small indexes)` : '';
  return `${theLimit}, with ${bytesText(inUse)} in use and only ${bytesText(free)} free below it${held}: ${act}`;
}

/**
 * `e` measured again (wasmOutOfMemory) when it reports the core's last failure and its operation
 * has given back more since (what it took before the failing call, or a whole new index): so
 * that `requested` counts what it gave back and `inUse` and `free` are the memory as it left
 * it. With `estimate` (a load into a new index, dropped, that stopped part-way), `requested`
 * adds the bytes of what it had not loaded; with `packed`, that much of what was given back is
 * not counted (wasmOutOfMemory). Anything else — another error, or one whose failure a later one
 * has replaced — is returned as it is.
 * @internal
 */
export function remeasured(e: unknown, estimate?: LoadEstimate, packed = 0): unknown {
  if (!(e instanceof OutOfMemoryError)) return e;
  const of = reported.get(e);
  if (of === undefined || of.failure !== core.heap_failures()) return e;
  return wasmOutOfMemory(of.what, estimate ?? of.estimate, packed);
}

/**
 * `e`, a failure reported again later (`what` failed, e.g. a rebuild refused until something
 * that could make it succeed changes, `why` it is not tried now), with the memory as it is now:
 * what it needed, and `limit`, `free` and `inUse` read again, so that `inUse` is
 * memoryLimit().inUse where it is thrown; its reason becomes 'limit' once less than it needed is
 * free. The message says what the fields say, with what to do, as the first one did.
 * @internal
 */
export function outOfMemoryAgain(what: string, e: OutOfMemoryError, why: string): OutOfMemoryError {
  const details = memoryNow(e);
  // an estimate stays one when it is reported again
  const needs = reported.get(e)?.about === true ? 'about ' : '';
  return new OutOfMemoryError(
    `${what}: it needs ${needs}${bytesText(details.requested)}; ${memoryAdvice(details, false)}; ${why}`,
    details,
  );
}

/**
 * What `e` needed, with `limit`, `free` and `inUse` read now: for a failure reported after more
 * memory was given back that its operation did not need (memory its caller compacted since),
 * which remeasured() would count as needed. Its reason becomes 'limit' once less than it needed
 * is free.
 * @internal
 */
export function memoryNow(e: OutOfMemoryError): { requested: number; reason: MemoryShortage; limit: number; free: number; inUse: number } {
  const { limit, inUse } = memoryLimit();
  const free = core.heap_bytes_free();
  const requested = e.requested ?? 0;
  const reason = (e.reason === 'fragmented' && free < requested ? 'limit' : e.reason) ?? 'limit';
  return { requested, reason, limit, free, inUse };
}

/** `n` bytes, with the largest binary unit that keeps it at least 1 (`983,040 bytes (960 KiB)`). */
function bytesText(n: number): string {
  const units = ['GiB', 'MiB', 'KiB'];
  for (let i = 0; i < units.length; i++) {
    const size = 1024 ** (units.length - i);
    if (n >= size) return `${formatCount(n)} bytes (${Number((n / size).toFixed(1))} ${units[i]})`;
  }
  return `${formatCount(n)} bytes`;
}

/**
 * Bytes in use (memoryLimit().inUse) read alone: one call into the core, without the object and
 * the other reads of memoryLimit(), for a caller that reads it on every call of its own.
 * @internal
 */
export function bytesInUse(): number {
  return core.heap_bytes_in_use();
}

/**
 * Bytes the core could still hand out without the cap being raised: the cap less the bytes in
 * use (free blocks plus room to grow). An upper bound — fragmentation, or a host that refuses to
 * grow, may leave less usable — that rises only when the cap is raised or memory is freed. O(1).
 * @internal
 */
export function memoryHeadroom(): number {
  return core.heap_limit_pages() * WASM_PAGE_BYTES - core.heap_bytes_in_use();
}
