// The command-line arguments of the bench scripts (bench/run.ts, bench/strategies/run.ts), read
// with node:util's parseArgs in strict mode: an argument a script does not know is refused, not
// skipped. A full run takes minutes and writes over the committed results by default, so a
// misspelt `--quick`, or one script's option given to the other, must stop it before it starts.
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A usage error: what the scripts print, in one line, before they exit with status 2. */
export class UsageError extends Error {}

/** What parseArgs reads for `options`, strict and without positional arguments. */
type ArgValues<O extends NonNullable<ParseArgsConfig['options']>> = ReturnType<
  typeof parseArgs<{ options: O; strict: true; allowPositionals: false }>
>['values'];

/**
 * The values of `options` in `args` (process.argv after the script; `--name value` or
 * `--name=value`), as parseArgs reads them; UsageError, one line ending with `usage`, for an
 * unknown option, a positional argument, or an option without its value; `--name needs a value`
 * for an empty one (`--out=`), which parseArgs takes: no option of the scripts means anything empty.
 */
export function readArgs<O extends NonNullable<ParseArgsConfig['options']>>(
  args: readonly string[],
  options: O,
  usage: string,
): ArgValues<O> {
  let values: ArgValues<O>;
  try {
    values = parseArgs({ args: [...args], options, strict: true, allowPositionals: false }).values;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS_')) throw e;
    // parseArgs's message for a value that looks like an option spans three lines: its first says it
    throw new UsageError(`${(e as Error).message.split('\n')[0]!.replace(/\.$/, '')}; it takes ${usage}`);
  }
  for (const [name, value] of Object.entries(values)) {
    if (value === '') throw new UsageError(`--${name} needs a value`);
  }
  return values;
}
