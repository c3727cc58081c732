// Every ```ts block of README.md and of every page under docs/ runs, as written, against this
// checkout: `from 'ipallocator'` and its other entry points are pointed at the sources (the entry
// points of package.json). A block whose first line is `// no-run` (cluster examples) is
// type-shaped documentation and is skipped, saying why.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DOCUMENTS as documents, root } from './documents.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipallocator-readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function localize(code: string): string {
  const src = (p: string) => JSON.stringify(pathToFileURL(join(root, p)).href);
  return code
    .replaceAll(`'ipallocator/kubernetes'`, src('adapters/kubernetes/index.ts'))
    .replaceAll(`'ipallocator/metrics'`, src('adapters/prometheus.ts'))
    .replaceAll(`'ipallocator/core'`, src('adapters/core.ts'))
    .replaceAll(`'ipallocator'`, src('adapters/index.ts'));
}

for (const doc of documents) {
  const text = readFileSync(join(root, doc), 'utf8');
  const blocks = [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m, i) => ({ i, code: m[1]! }));
  // a page without examples (docs/semantics.md) has nothing to run
  if (blocks.length === 0 && doc !== 'README.md') continue;
  describe(`${doc} examples`, () => {
    if (doc === 'README.md') {
      it('has examples', () => {
        expect(blocks.length).toBeGreaterThan(3);
      });
    }
    for (const { i, code } of blocks) {
      const title = code
        .split('\n')[0]!
        .replace(/^\/\/\s*/, '')
        .slice(0, 70);
      if (code.startsWith('// no-run')) {
        it.skip(`${doc} block ${i}: ${title} (needs a live cluster)`, () => {});
        continue;
      }
      it(`${doc} block ${i}: ${title}`, async () => {
        const file = join(dir, `${doc.replaceAll('/', '-')}-block-${i}.ts`);
        writeFileSync(file, localize(code));
        // The examples state their expectations with console.assert: make a failed one fail the test.
        const failures: unknown[][] = [];
        const original = console.assert;
        console.assert = (cond?: unknown, ...data: unknown[]) => {
          if (!cond) failures.push(data);
        };
        try {
          await import(pathToFileURL(file).href);
        } finally {
          console.assert = original;
        }
        expect(failures).toEqual([]);
      });
    }
  });
}
