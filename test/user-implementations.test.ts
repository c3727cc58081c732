// A store, a cache, synchronous operations and a ServiceCIDR source of your own, written as a
// user writes them (test/types/user-implementations.ts): they type-check under the strictest
// options an app may use, while a method taken off an object typed by one of those interfaces
// does not; and the allocators work with them.
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { useThem } from './types/user-implementations.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = `${root}test/types/user-implementations.ts`;

/** The diagnostics of the fixture under the package's tsconfig.json, with `extra` options on top. */
function diagnostics(extra: ts.CompilerOptions): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    `${root}tsconfig.json`,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  )!;
  const program = ts.createProgram([FIXTURE], { ...config.options, ...extra });
  const file = program.getSourceFile(FIXTURE)!;
  return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map(
    (d) =>
      `${d.start === undefined ? '' : `line ${file.getLineAndCharacterOfPosition(d.start).line + 1}: `}${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
  );
}

describe('implementing Store, StoreCache, SyncStoreOps and ServiceCIDRSource', () => {
  it.each([
    ['the package tests', {}],
    [
      'the strictest options an app may set',
      { exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, noPropertyAccessFromIndexSignature: true },
    ],
  ] as const)('as classes and object literals type-checks under %s, and a method taken off them does not', (_label, extra) => {
    expect(diagnostics(extra)).toEqual([]);
  });

  it('the allocators allocate through each of them', async () => {
    const given = await useThem();
    expect(given).toHaveLength(4);
    expect(given).toEqual([
      expect.stringMatching(/^10\.1\.0\.[1-6]$/), // your Store class
      expect.stringMatching(/^10\.1\.0\.[1-6]$/), // your Store literal
      expect.stringMatching(/^10\.2\.0\.[1-6]$/), // your ServiceCIDRSource class
      expect.stringMatching(/^10\.3\.0\.[1-6]$/), // your ServiceCIDRSource literal
    ]);
  });
});
