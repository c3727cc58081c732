// Evaluated before anything that loads @kubernetes/client-node (index.ts imports it first): a
// client-node whose undici cannot run on this Node would otherwise end the process while loading
// (client-node-check.ts); this makes the import of ipallocator/kubernetes fail with a clear,
// catchable IPAllocatorError instead.
import { refuseUnloadableClientNode } from './client-node-check.ts';

refuseUnloadableClientNode(import.meta.url);
