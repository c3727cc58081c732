// Micro-benchmark of adapters/address.ts: `npx tsx bench/address.bench.ts` (or `deno run -A`).
// Fixed inputs (a seeded generator), results printed as ns/op with the runtime and CPU.
import Benchmark from 'benchmark';
import os from 'node:os';
import ipaddr from 'ipaddr.js';
import { canonicalAddr, formatIPv4, formatIPv6, isCanonical, parseAddrInto, parsePrefix } from '../adapters/address.ts';

/** xorshift32 with a fixed seed, so every run formats and parses the same values. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

const N = 1024;
const next = rng(0x5eed);
const v4: number[] = [];
const v6: [number, number, number, number][] = [];
for (let i = 0; i < N; i++) {
  v4.push(next());
  // Service-range-like IPv6: fixed /64 network, a sparse interface id (zero runs are common).
  v6.push([0x20010db8, next() & 0xffff, 0, next() & 0xfffff]);
}
/** Inputs as they arrive from JSON: flat strings, not the ropes string concatenation builds. */
const flat = (s: string): string => JSON.parse(JSON.stringify(s)) as string;
const v4Text = v4.map((v) => flat(formatIPv4(v)));
const v6Text = v6.map((w) => flat(formatIPv6(w[0], w[1], w[2], w[3])));
const v6Full = v6
  .map((w) =>
    [w[0] >>> 16, w[0] & 0xffff, w[1] >>> 16, w[1] & 0xffff, w[2] >>> 16, w[2] & 0xffff, w[3] >>> 16, w[3] & 0xffff]
      .map((x) => x.toString(16).padStart(4, '0'))
      .join(':'),
  )
  .map(flat);
const out = new Uint32Array(4);
let sink = 0;
let k = 0;

const suite = new Benchmark.Suite('address');
suite
  .add('parse IPv4', () => {
    sink += parseAddrInto(v4Text[k++ & (N - 1)], out);
  })
  .add('parse IPv6 (canonical)', () => {
    sink += parseAddrInto(v6Text[k++ & (N - 1)], out);
  })
  .add('parse IPv6 (8 full groups)', () => {
    sink += parseAddrInto(v6Full[k++ & (N - 1)], out);
  })
  .add('format IPv4', () => {
    sink += formatIPv4(v4[k++ & (N - 1)]!).length;
  })
  .add('format IPv6', () => {
    const w = v6[k++ & (N - 1)]!;
    sink += formatIPv6(w[0], w[1], w[2], w[3]).length;
  })
  .add("parse + format IPv6 (the boundary table's pair)", () => {
    parseAddrInto(v6Text[k++ & (N - 1)], out);
    sink += formatIPv6(out[0]!, out[1]!, out[2]!, out[3]!).length;
  })
  .add('isCanonical IPv6 (canonical text, words at hand)', () => {
    const i = k++ & (N - 1);
    const w = v6[i]!;
    sink += isCanonical(v6Text[i]!, 6, w) ? 1 : 0;
  })
  .add('canonicalAddr IPv6', () => {
    sink += canonicalAddr(v6Full[k++ & (N - 1)]).length;
  })
  .add('parsePrefix IPv4', () => {
    sink += parsePrefix('10.96.0.0/12').bits;
  })
  .add('ipaddr.js IPv4.parse (reference)', () => {
    sink += ipaddr.IPv4.parse(v4Text[k++ & (N - 1)]!).octets[0]!;
  })
  .add('ipaddr.js IPv6 parse + toRFC5952String (reference)', () => {
    sink += ipaddr.IPv6.parse(v6Full[k++ & (N - 1)]!).toRFC5952String().length;
  })
  .on('cycle', (e: Benchmark.Event) => {
    const t = e.target as Benchmark.Target & { name: string };
    const ns = (t.stats!.mean * 1e9).toFixed(1);
    console.log(`${t.name.padEnd(52)} ${ns.padStart(8)} ns/op  ±${t.stats!.rme!.toFixed(1)}%`);
  })
  .on('complete', () => {
    if (sink === 42) console.log('');
  });

const runtime =
  typeof (globalThis as { Deno?: { version: { deno: string } } }).Deno !== 'undefined'
    ? `Deno ${(globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno}`
    : `Node ${process.version}`;
console.log(`${runtime}, ${os.cpus()[0]?.model ?? 'unknown CPU'}`);
suite.run();
