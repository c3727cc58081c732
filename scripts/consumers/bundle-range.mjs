// Bundled by scripts/check-package.mjs (esbuild) and run without node_modules: an app that uses
// Range alone gets a bundle without the store-backed allocators ("sideEffects" in package.json).
import { Range } from 'ipallocator';

const range = new Range('10.0.0.0/24');
const ip = range.allocateNext();
if (!range.has(ip) || range.used() !== 1) throw new Error(`Range in a bundle: ${ip} not held`);
range.destroy();
