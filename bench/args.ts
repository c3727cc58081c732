// The command-line arguments of the bench scripts (bench/run.ts, bench/strategies/run.ts), read
// with node:util's parseArgs in strict mode: an argument a script does not know is refused, not
// skipped. A full run takes minutes and writes over the committed results by default, so a
// misspelt `--quick`, or one script's option given to the other, must stop it before it starts.
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A usage error: what the scripts print, in one line, before they exit with status 2. */
export class UsageError extends Error {}

/**
 * `--help` or `-h` among the arguments, whatever else they hold: the scripts print `usage` (the
 * message) on standard output and exit with status 0, running nothing.
 */
export class HelpRequested extends Error {}

/** What parseArgs reads for `options`, strict and without positional arguments. */
type ArgValues<O extends NonNullable<ParseArgsConfig['options']>> = ReturnType<
  typeof parseArgs<{ options: O; strict: true; allowPositionals: false }>
>['values'];

/**
 * The values of `options` in `args` (process.argv after the script; `--name value` or
 * `--name=value`), as parseArgs reads them; UsageError, one line ending with `usage`, for an
 * unknown option, a positional argument, or an option without its value; `--name needs a value`
 * for an empty one (`--out=`, or any one of an option given several times), which parseArgs takes:
 * no option of the scripts means anything empty.
 * HelpRequested, with `usage`, when they hold `--help` or `-h`.
 */
export function readArgs<O extends NonNullable<ParseArgsConfig['options']>>(
  args: readonly string[],
  options: O,
  usage: string,
): ArgValues<O> {
  if (args.some((a) => a === '--help' || a === '-h')) throw new HelpRequested(usage);
  let values: ArgValues<O>;
  try {
    values = parseArgs({ args: [...args], options, strict: true, allowPositionals: false }).values;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS_')) throw e;
    const missing = code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' ? missingValue(args, options) : undefined;
    if (missing !== undefined) throw new UsageError(missing);
    throw new UsageError(`${(e as Error).message.split('\n')[0]!.replace(/\.$/, '')}; it takes ${usage}`);
  }
  for (const [name, value] of Object.entries(values)) {
    // an option given several times (`multiple`) answers an array, each of its values checked
    if (value === '' || (Array.isArray(value) && value.includes(''))) throw new UsageError(`--${name} needs a value`);
  }
  return values;
}

/**
 * The option of `options` that takes a value and was given none, said as `--out needs a value`:
 * at the end of `args`, or followed by a word that starts with a dash (`--out --quick`), which
 * parseArgs refuses as "argument is ambiguous" (a value that starts with a dash is given as
 * `--out=-x`). Found in the tokens of a lenient parse of the same arguments; undefined if none is.
 */
function missingValue(args: readonly string[], options: NonNullable<ParseArgsConfig['options']>): string | undefined {
  const { tokens } = parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true });
  for (const t of tokens) {
    if (t.kind !== 'option' || options[t.name]?.type !== 'string') continue;
    const needs = `--${t.name} needs a value`;
    if (t.value === undefined) return needs;
    if (!t.inlineValue && t.value.startsWith('-')) {
      return `${needs}: it is followed by ${t.value} (a value that starts with a dash is written --${t.name}=<value>)`;
    }
  }
  return undefined;
}

/**
 * Checks, before anything runs, that the files of `prefix` (`<prefix>.json`, `<prefix>.md`, …)
 * can be written, since a run finds out only at its end, minutes later: `prefix` names files, not
 * a directory (one ending in a slash would write `.json`, `.md` into it), and its directory takes
 * new files, or can be made: the nearest of it and its parents that exists is a directory this
 * process may write in. Nothing is made here (a run refused later leaves nothing behind); the run
 * makes the directory when it writes. `given`: whether --out said it, or it is the script's
 * default. UsageError saying which and why otherwise.
 */
export function checkOutPrefix(prefix: string, given: boolean): void {
  const what = given ? `--out ${prefix}` : `the results' default path ${prefix}`;
  if (/[\\/]$/.test(prefix)) {
    throw new UsageError(
      `${what} names a directory: give a path prefix, such as ${join(prefix, 'results')} (the run writes results.json, results.md, … there)`,
    );
  }
  try {
    let at = resolve(dirname(prefix));
    while (!exists(at)) at = dirname(at);
    if (!statSync(at).isDirectory()) throw new Error(`${at} is not a directory`);
    accessSync(at, constants.W_OK | constants.X_OK);
  } catch (e) {
    const why = e instanceof Error ? e.message.split('\n')[0] : String(e);
    throw new UsageError(`${what}: cannot write there: ${why}${given ? '' : ' (--out <prefix> writes elsewhere)'}`);
  }
}

/** Whether `path` exists; false only when it does not (ENOENT), other errors (ENOTDIR, EACCES) thrown. */
function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}
