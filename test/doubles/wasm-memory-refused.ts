// Preloaded into a child process (`node --import`, `deno run --preload`): the engine refuses every
// new WebAssembly instance its memory, with V8's own error, as it does under a limit on virtual
// memory (`ulimit -v`) below about 11 GiB on 64-bit Linux — V8 reserves 10 GiB of address space
// per WebAssembly memory for its guard regions. A real `ulimit -v` would stop tsx too, whose
// loader instantiates WebAssembly of its own (asynchronously: only the synchronous constructor,
// which the core uses, is replaced here).
function refusedInstance(): never {
  throw new RangeError('WebAssembly.Instance(): Out of memory: Cannot allocate Wasm memory for new instance');
}
WebAssembly.Instance = refusedInstance as unknown as typeof WebAssembly.Instance;
