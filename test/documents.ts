// The documents a user reads, whose examples run (readme.test.ts) and whose links resolve
// (doc-links.test.ts): README.md, then the pages of docs/ in name order.
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The checkout's root. */
export const root = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');

/** README.md and docs/*.md, as paths from the root. */
export const DOCUMENTS: readonly string[] = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
