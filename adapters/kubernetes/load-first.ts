// Evaluated before anything that loads @kubernetes/client-node (index.ts imports it first): a
// client-node whose undici cannot run on this Node would otherwise end the process while loading
// (client-node-check.ts); this makes the import of ipallocator/kubernetes fail with a clear,
// catchable IPAllocatorError instead.
//
// The WebAssembly core comes first: without WebAssembly (node --jitless) its module throws the
// IPAllocatorError saying so, and nothing after it is evaluated. client-node, evaluated, starts
// Node's own undici, whose HTTP parser is WebAssembly too: it fails in a rejection no importer
// can catch, which Node prints as a ReferenceError and ends the process with.
import '../wasm.ts';
import { refuseUnloadableClientNode } from './client-node-check.ts';

refuseUnloadableClientNode(import.meta.url);
