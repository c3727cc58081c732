// The one pager (adapters/kubernetes/pager.ts) against answers no kube-apiserver gives but a
// broken server or proxy may: it must end with an error, never hand back part of a list as all of it.
import { describe, expect, it } from 'vitest';
import type { CheckedList } from '../adapters/kubernetes/answers.ts';
import { listPages } from '../adapters/kubernetes/pager.ts';

const fail = (reason: string) => new Error(reason);
const page = (items: unknown[], token?: unknown): CheckedList =>
  ({ items, metadata: { resourceVersion: '7', ...(token !== undefined ? { continue: token } : {}) } }) as CheckedList;
const expired = () => Object.assign(new Error('Gone'), { code: 410 });

describe('listPages', () => {
  it('follows continue tokens to the end, and restarts an expired one as one list', async () => {
    const asked: (string | undefined)[] = [];
    const listing = await listPages(
      async ({ limit, continue: cont }) => {
        asked.push(limit === undefined ? 'all' : cont);
        if (limit === undefined) return page(['a', 'b', 'c']);
        if (cont === undefined) return page(['a'], 'T1');
        throw expired();
      },
      { pageSize: 1, fail },
    );
    expect(listing.items).toEqual(['a', 'b', 'c']);
    expect(asked).toEqual([undefined, 'T1', 'all']);
  });

  it('a restart asked for in one request that still carries a continue token fails: part of the list would be missing', async () => {
    const listing = listPages(
      async ({ limit, continue: cont }) => {
        if (limit === undefined) return page(['a'], 'T9'); // one page of many, taken for all of them
        if (cont === undefined) return page(['a'], 'T1');
        throw expired();
      },
      { pageSize: 1, fail },
    );
    await expect(listing).rejects.toThrow(/asked for in one request with a continue token: part of it would be missing/);
  });

  it.each([
    ['an object', {}],
    ['an array', ['A']],
    ['a number', 7],
  ])('a continue token that is %s fails the listing instead of being sent back as text', async (_what, token) => {
    let calls = 0;
    const listing = listPages(
      async () => {
        calls++;
        return page(['a'], token);
      },
      { pageSize: 1, fail },
    );
    await expect(listing).rejects.toThrow(/continue token that is not a string/);
    expect(calls).toBe(1);
  });

  it('passes on the estimate of the items left only when it is a count', async () => {
    for (const [given, heard] of [
      [5, 5],
      ['\u001b[2Jboom', undefined],
      [-5, undefined],
      [1.5, undefined],
    ] as const) {
      const remaining: (number | undefined)[] = [];
      let n = 0;
      await listPages(
        async () => {
          const p = page(['a'], ++n === 1 ? 'T1' : undefined);
          if (n === 1) (p.metadata as { remainingItemCount?: unknown }).remainingItemCount = given;
          return p;
        },
        { pageSize: 1, fail, onPage: (_listed, left) => remaining.push(left) },
      );
      expect(remaining).toEqual([heard, 0]);
    }
  });
});
