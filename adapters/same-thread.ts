// Why a Range, an allocator or a store cannot be sent to another thread, said by the copy that
// tries it.

/**
 * The first own field (`sameThreadOnly`) of each class whose objects live in the thread that made them: a
 * Range and the allocators (their WASM memory), a MemoryStore and its cache, an InMemoryServiceCIDRs
 * (its watchers), a KubernetesStore and a KubernetesServiceCIDRs (their informer and connections).
 * structuredClone, which postMessage applies to its message, copies an object's fields in order
 * and cannot copy a symbol: so sending one to a worker fails at once, with a DataCloneError that says why
 * (`Symbol(ipallocator: …) could not be cloned.`), rather than after copying every record, naming
 * the first function it met (`allocation() { }`, a store's default onWatcherError, a function of
 * client-node's). @internal
 */
export const SAME_THREAD: unique symbol = Symbol(
  // short: past about 128 characters, Deno's message elides its middle ("…<omitted>…")
  'ipallocator: a Range, an allocator or a store lives in the thread that made it and cannot be sent to another thread',
);
