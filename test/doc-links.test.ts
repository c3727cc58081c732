// Every relative link of README.md and of the pages under docs/ reaches a file of this checkout,
// and every #anchor a heading of its target, by GitHub's rules for heading anchors (lower case,
// punctuation dropped, each space a hyphen, a repeated heading suffixed -1, -2, …): moving a
// section to another page breaks the links into it, and nothing else would notice.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCUMENTS as documents, root } from './documents.ts';

/** The text outside fenced code blocks, line by line (a heading or link inside a fence is none). */
function proseLines(text: string): string[] {
  let fenced = false;
  const lines: string[] = [];
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) lines.push(line);
  }
  return lines;
}

/** GitHub's anchor for a heading's text: the rendered text, lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings, repeated ones numbered as GitHub numbers them. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of proseLines(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (m === null) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let found = anchorCache.get(file);
  if (found === undefined) anchorCache.set(file, (found = anchors(readFileSync(file, 'utf8'))));
  return found;
}

/** The targets of a file's Markdown links and images, outside code. */
function links(text: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(text)) {
    const prose = line.replace(/`[^`]*`/g, '``');
    for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) targets.push(m[1]!);
  }
  return targets;
}

describe('GitHub heading anchors', () => {
  it('follow GitHub: lower case, punctuation and code marks dropped, each space a hyphen', () => {
    expect(slug('Range: synchronous, in memory')).toBe('range-synchronous-in-memory');
    expect(slug('Semantics and where we differ from upstream')).toBe('semantics-and-where-we-differ-from-upstream');
    expect(slug('`MetaAllocator` / `DualStackAllocator`')).toBe('metaallocator--dualstackallocator');
    expect(slug('Which strategy: what the simulator shows')).toBe('which-strategy-what-the-simulator-shows');
    expect([...anchors('# A\n## A\n```\n# not a heading\n```\n## A\n')]).toEqual(['a', 'a-1', 'a-2']);
  });
});

for (const doc of documents) {
  describe(`${doc}: links`, () => {
    const text = readFileSync(join(root, doc), 'utf8');
    const relativeLinks = links(text).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
    it('has its relative links resolve to files and headings', () => {
      const broken: string[] = [];
      for (const target of relativeLinks) {
        const hash = target.indexOf('#');
        const path = hash === -1 ? target : target.slice(0, hash);
        const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
        const file = path === '' ? join(root, doc) : resolve(dirname(join(root, doc)), decodeURIComponent(path));
        if (relative(root, file).startsWith('..') || !existsSync(file)) {
          broken.push(`${target}: no file ${relative(root, file)}`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!file.endsWith('.md')) {
          broken.push(`${target}: an anchor into a file that is not Markdown`);
          continue;
        }
        if (!anchorsOf(file).has(anchor)) {
          broken.push(`${target}: ${relative(root, file)} has no heading #${anchor}`);
        }
      }
      expect(broken).toEqual([]);
    });
  });
}

describe('the pages README.md links', () => {
  it('are all shipped: package.json "files" names each docs/ page or docs/*.md', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { files: string[] };
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const pages = [...new Set(links(readme).map((t) => t.split('#')[0]!))].filter((p) => /^docs\/[^/]+\.md$/.test(p));
    expect(pages.length).toBeGreaterThan(0);
    const unshipped = pages.filter((p) => !pkg.files.includes(p) && !pkg.files.includes('docs/*.md'));
    expect(unshipped).toEqual([]);
  });
});
