// Small helpers shared by the test files.

/** The value a promise rejects with; fails the test when it resolves instead. */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

/** What `call` threw or its promise rejected with, or undefined when it succeeded. */
export async function failure(call: () => unknown): Promise<unknown> {
  try {
    await call();
    return undefined;
  } catch (e) {
    return e;
  }
}

/** What `make` threw, or undefined when it returned (what it made is then destroyed). */
export function failureOfMaking(make: () => { destroy(): void }): unknown {
  try {
    make().destroy();
    return undefined;
  } catch (e) {
    return e;
  }
}

/** The value a promise resolves to, or the error it rejects with. */
export async function settle<T>(p: Promise<T>): Promise<T | Error> {
  try {
    return await p;
  } catch (e) {
    return e as Error;
  }
}

import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { parseAddr } from '../adapters/address.ts';
import { Prefix } from '../adapters/geometry.ts';
import type { IPAllocator } from '../adapters/types.ts';

/** upstream servicecidr.PrefixContainsIP: inside, not the network, not the IPv4 broadcast. */
export function hostOf(cidr: string, ip: string): boolean {
  const { family, words } = parseAddr(ip);
  return Prefix.parse(cidr).inRange(family, words);
}

/** allocateNext while free() > 0, each result new (added to `found`). */
export async function drain(alloc: IPAllocator, found: Set<string>): Promise<void> {
  while (alloc.free() > 0n) {
    const ip = await alloc.allocateNext();
    if (found.has(ip)) throw new Error(`allocated ${ip} twice`);
    found.add(ip);
  }
}

/**
 * The garbage collector, exposed through V8's flags at run time (no --expose-gc needed), or
 * undefined where the runtime does not allow that (tests that need it then skip).
 */
export function exposeGc(): (() => void) | undefined {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (typeof existing === 'function') return existing;
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

/** A fixed-seed xorshift32 (its next unsigned 32-bit value per call), so large tests are deterministic. */
export function xorshift(seed: number): () => number {
  let s = seed | 0;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s >>> 0;
  };
}

/**
 * What the import says without WebAssembly in the runtime running the tests, naming that runtime's
 * flags: Deno's `--v8-flags=--jitless`, Node's `--jitless` and `--no-expose-wasm`.
 */
export const NO_WASM =
  'Deno' in globalThis
    ? 'ipallocator needs WebAssembly, which this Deno process does not offer (started with --v8-flags=--jitless, or DENO_V8_FLAGS=--jitless?)'
    : 'ipallocator needs WebAssembly, which this Node process does not offer (started with --jitless, on the command line or in NODE_OPTIONS, or with --no-expose-wasm?)';

/**
 * The two ways a value is sent to another thread, each applying structuredClone to it as
 * postMessage does (worker_threads, MessagePort, Deno's Worker): the test of what cannot be sent.
 */
export const SENDS_TO_ANOTHER_THREAD: [string, (value: unknown) => void][] = [
  ['structuredClone', (value) => structuredClone(value)],
  [
    'MessagePort.postMessage',
    (value) => {
      const { port1, port2 } = new MessageChannel();
      try {
        port1.postMessage({ value });
      } finally {
        port1.close();
        port2.close();
      }
    },
  ],
];
