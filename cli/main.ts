// The `ipallocator` command (also installed as `kubectl-ipallocator`, a kubectl plugin):
//
//   status        utilisation of every ServiceCIDR range of the cluster
//   check [--fix] kube-apiserver's ClusterIP repair rules as a report; --fix deletes the leaks
//   map CIDR      a picture of one range as SVG, from the cluster or a Range snapshot file
//
// run() is the whole command with its input and output passed in (the tests call it in-process);
// executable.ts (behind both bins) calls it with the process's. Expected failures are CliErrors:
// a message, no stack trace, exit code 2 (EXIT_ERROR). The cluster code (and
// @kubernetes/client-node) loads only when a command talks to a cluster, and the WebAssembly core
// (with-core.ts) only once a command has read its options: help, the version and usage errors
// answer without it (node --jitless).
import { statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { readFileBounded } from '../adapters/bounded-read.ts';
import { IPAllocatorError, InvalidCIDRError } from '../adapters/errors.ts';
import { fsFailure } from '../adapters/fs-failure.ts';
import { nearestName } from '../adapters/input.ts';
import { quoteInput, quoteText } from '../adapters/quote.ts';
import type { Prefix } from '../adapters/geometry.ts';
import { installOf, underDeno } from '../adapters/peer-install.ts';
import type { Range } from '../adapters/range.ts';
import { RECONCILE_GRACE_MS } from '../adapters/store.ts';
import type { CheckReport, FixResult } from './check.ts';
import type { Cluster, ClusterOptions } from './cluster.ts';
import { type ListedIPAddress, type ListedServiceCIDR, readSavedListing, SAVED_LISTING_COMMAND, type ServiceRecord } from './listing.ts';
import { formatDuration, parseDuration } from './duration.ts';
import { clientNodeMismatch } from '../adapters/kubernetes/client-node-check.ts';
import { deniedByRuntime } from '../adapters/kubernetes/errors.ts';
import { CliError, EXIT_CLEAN, EXIT_ERROR, EXIT_FOUND, STOP_SIGNALS, type StopSignal, UsageError, unreadableFile } from './errors.ts';
import type { RangeMap } from './map.ts';
import { counted, formatCount, named, shown } from './text.ts';
import type * as WithCore from './with-core.ts';

/** Where the command reads and writes. */
export interface Io {
  stdout: { write(text: string): unknown; isTTY?: boolean | undefined };
  stderr: { write(text: string): unknown; isTTY?: boolean | undefined };
  /** Answers to the confirmation prompt; on a terminal (`isTTY`), the leaks are listed above it. */
  stdin: Readable & { isTTY?: boolean | undefined };
  /** The clock, ms since the epoch (the grace of `check`). */
  now?: () => number;
  /** The name to show in help: "ipallocator" or "kubectl ipallocator". */
  prog?: string;
  /**
   * Called as `check --fix` starts deleting, with what a signal (Ctrl-C, SIGTERM, SIGHUP) does
   * then: stop after the leak under way and report what was done. Returns what ends that, called
   * once the deleting is over. executable.ts hooks the signals here for the first one: a second
   * ends the process.
   */
  onInterrupt?: (stop: (signal: StopSignal) => void) => () => void;
}

// ── options ─────────────────────────────────────────────────────────────────────────────────
//
// One table per command is the one home of each of its options: the name (the key), the value it
// takes — as the help names it and as a usage error says what it takes — and its help lines.
// Node's parser is configured from it (parserOptions), the help's option lines are written from
// it (optionsHelp), and every usage error about an option's value reads it.

/** One option of a command. */
interface OptionSpec {
  /** The one-letter form: `y` for `-y`. */
  readonly short?: string;
  /** The value the option takes; absent for a flag (which takes none). */
  readonly value?: OptionValue;
  /** Its help, one entry per line: the first beside the option, the others below it. */
  readonly help: readonly string[];
}

interface OptionValue {
  /** The value's name in the help and the usage: `N` in `--top N`. */
  readonly name: string;
  /** What it takes, as a usage error says it: `--top needs a value: a whole number from 0 to 1,000,000,000`. */
  readonly takes: string;
  /** A whole number in [0, max] (wholeNumberOption reads it; wholeNumberValue writes `takes`), and its default. */
  readonly wholeNumber?: { readonly fallback: number; readonly max: number };
  /** A duration in [0, maxMs] (durationOption reads it, as parseDuration reads every duration), and its default. */
  readonly duration?: { readonly fallbackMs: number; readonly maxMs: number };
}

type OptionTable = Readonly<Record<string, OptionSpec>>;

/**
 * The one rule of every option that takes a whole number: decimal digits only (no sign, no
 * exponent, no fraction), from 0 to `max`, which what it `takes` states, so that each refusal, of
 * `1e3` as of a number past the largest, says the range; `fallback` when the option is absent.
 */
function wholeNumberValue(name: string, fallback: number, max: number): OptionValue {
  return { name, takes: `a whole number from 0 to ${formatCount(max)}`, wholeNumber: { fallback, max } };
}

/** The longest --grace: a year. Longer would hold back every orphan a cluster ever had. */
const MAX_GRACE_MS = 365 * 24 * 3600 * 1000;
/** Upstream's grace (repairip.go), as reconcile() takes it. */
const DEFAULT_GRACE_SECONDS = RECONCILE_GRACE_MS / 1000;
const DEFAULT_TOP = 5;
/** The largest --top: more IPAddresses than any cluster holds, so it reads as "all" (--json lists all too). */
const MAX_TOP = 1_000_000_000;
const TOP_VALUE = wholeNumberValue('N', DEFAULT_TOP, MAX_TOP);

/** The options of every command that talks to a cluster (all three), last in each help. */
const CLUSTER_OPTIONS = {
  kubeconfig: {
    value: { name: 'FILE', takes: 'a kubeconfig file' },
    help: ['kubeconfig to use (default: $KUBECONFIG, then ~/.kube/config)'],
  },
  context: {
    value: { name: 'NAME', takes: 'a context of the kubeconfig' },
    help: ['kubeconfig context to use (default: its current-context)'],
  },
  'request-timeout': {
    value: { name: 'DURATION', takes: 'a duration such as 500ms, 30s, 2m or 1m30s (0 for no limit)' },
    help: [
      'how long one request to the API server may wait for its answer, as',
      "kubectl's flag: 500ms, 30s, 2m, 1m30s; a bare whole number is",
      'seconds; 0 or a negative duration waits for ever (default 30s)',
    ],
  },
  help: { short: 'h', help: ['this help'] },
} as const satisfies OptionTable;

/** --from, of status and check: a saved listing read instead of the cluster. */
const FROM_OPTION = {
  value: { name: 'FILE', takes: `a file that ${SAVED_LISTING_COMMAND} wrote (- for standard input)` },
  help: [
    'read a saved listing instead of the cluster: the JSON that',
    SAVED_LISTING_COMMAND,
    'writes (at most 500 MiB); - reads it from standard input (./- is a',
    'file named -); no kubeconfig or cluster is needed',
  ],
} as const satisfies OptionSpec;

const STATUS_OPTIONS = {
  json: { help: ['print the report as JSON (schema "ipallocator/status/v1")'] },
  top: { value: TOP_VALUE, help: [`owners and strays to show (default ${DEFAULT_TOP})`] },
  from: FROM_OPTION,
  ...CLUSTER_OPTIONS,
} as const satisfies OptionTable;

const CHECK_OPTIONS = {
  fix: { help: ['delete the fixable IPAddresses (each re-checked just before), after asking'] },
  yes: { short: 'y', help: ['do not ask'] },
  grace: {
    value: {
      name: 'DURATION',
      takes: 'a duration such as 90s, 2m or 1h30m, or a whole number of seconds, from 0 to 8760h (365 days)',
      duration: { fallbackMs: RECONCILE_GRACE_MS, maxMs: MAX_GRACE_MS },
    },
    help: [
      'age before an IPAddress without its Service counts: 90s, 2m,',
      '1h30m, as --request-timeout reads it; a bare whole number is',
      `seconds (default ${DEFAULT_GRACE_SECONDS}s, upstream's; at most 8760h, a year)`,
    ],
  },
  json: { help: ['print the report as JSON (schema "ipallocator/check/v1")'] },
  top: {
    value: TOP_VALUE,
    help: [
      'IPAddresses to name of those inside the grace, of the leaks --fix',
      `asks about at a terminal and of those it deleted (default ${DEFAULT_TOP};`,
      '--json lists all)',
    ],
  },
  from: FROM_OPTION,
  ...CLUSTER_OPTIONS,
} as const satisfies OptionTable;

const MAP_OPTIONS = {
  out: {
    value: { name: 'FILE.svg', takes: 'the file to write the SVG to (- for standard output)' },
    help: [
      'write the SVG there; - writes it to standard output (./- is a file named -)',
      '(default: standard output, unless it is a terminal)',
    ],
  },
  snapshot: {
    value: { name: 'FILE', takes: 'a Range snapshot file (- for standard input)' },
    help: [
      'read a Range snapshot file instead of the cluster: Range.snapshot()',
      'as JSON, its data in base64 (at most 128 MiB):',
      '{"range": "<cidr>", "data": "<base64>", "length": n, "checksum": crc32};',
      '- reads it from standard input (./- is a file named -)',
    ],
  },
  ...CLUSTER_OPTIONS,
} as const satisfies OptionTable;

/** An option as the help and usage errors write it with its value: `--top N`, `--out FILE.svg`. */
function withValue(name: string, spec: OptionSpec): string {
  return spec.value === undefined ? `--${name}` : `--${name} ${spec.value.name}`;
}

/** Where an option's help starts on its line: past the longest option written beside it. */
const HELP_COLUMN = 21;

/**
 * The option lines of a command's help, in the table's order: each option (its short form first)
 * with its help beside it, or below it when the option is too long to leave two spaces.
 */
function optionsHelp(table: OptionTable): string {
  const indent = ' '.repeat(HELP_COLUMN);
  const lines: string[] = [];
  for (const [name, spec] of Object.entries(table)) {
    const left = `  ${spec.short === undefined ? '' : `-${spec.short}, `}${withValue(name, spec)}`;
    const [first, ...more] = spec.help;
    if (left.length + 2 <= HELP_COLUMN) lines.push(left.padEnd(HELP_COLUMN) + first);
    else lines.push(left, indent + first);
    for (const line of more) lines.push(indent + line);
  }
  return `${lines.join('\n')}\n`;
}

/** Node's parser configuration of a table: a string option for each that takes a value, a boolean for a flag. */
type ParserOptions<T extends OptionTable> = {
  [K in keyof T]: T[K] extends { readonly value: OptionValue } ? { type: 'string'; short?: string } : { type: 'boolean'; short?: string };
};

function parserOptions<T extends OptionTable>(table: T): ParserOptions<T> {
  const config: NonNullable<ParseArgsConfig['options']> = {};
  for (const [name, spec] of Object.entries(table)) {
    config[name] = { type: spec.value === undefined ? 'boolean' : 'string', ...(spec.short === undefined ? {} : { short: spec.short }) };
  }
  return config as ParserOptions<T>;
}

const HELP = {
  main: (p: string) => `Usage: ${p} <command> [options]

Service ClusterIP ranges of a Kubernetes cluster (ServiceCIDR and IPAddress objects, 1.33+):

  status        how full every ServiceCIDR range is, with the static and dynamic bands
  check         find leaked and inconsistent IPAddresses, as kube-apiserver's repair loop does;
                --fix deletes the leaks
  map CIDR      draw a range as an SVG map (from the cluster, or from a Range snapshot file)

status and check read the cluster of the current kubeconfig context, or with --from FILE a saved
listing (kubectl get servicecidrs,ipaddresses,services -A -o json), no cluster needed.
Run '${p} <command> --help' for a command's options, '${p} --version' for the version.
Exit codes: 0 fine, 1 check found problems, 2 usage, connection or API error (with --json,
nothing on stdout: check the exit code, set -o pipefail), 130 any command ended by Ctrl-C (143
SIGTERM, 129 SIGHUP; check --fix first reports what it deleted).
`,
  status: (p: string) => `Usage: ${p} status [options]

For each ServiceCIDR: its ranges, Ready condition, size, used, free, the static and dynamic
bands' use, a bar per range. Used counts every IPAddress in the range, whoever made it; where
kube-apiserver's allocated_ips and available_ips metrics (its own labelled IPAddresses only)
read otherwise, a line under the range says what they read. Then IPAddresses in a range this
tool does not allocate from, IPAddresses outside every ServiceCIDR, and the namespaces owning
the most addresses the ranges count as used. Needs RBAC list on servicecidrs and ipaddresses (networking.k8s.io).

${optionsHelp(STATUS_OPTIONS)}`,
  check: (p: string) => `Usage: ${p} check [options]

Applies kube-apiserver's ClusterIP repair rules (repairip.go) and reports:
  not-a-service, orphan, wrong-reference   IPAddresses (managed by ipallocator.k8s.io) whose
                                           parent is not a Service, no longer exists (after the
                                           grace), or does not hold the address: fixable
  missing, out-of-range, held-by-other,    ClusterIPs of Services without a correct IPAddress:
  duplicate, bad-labels, invalid-cluster-ip  reported only (kube-apiserver repairs or you recreate)
Exit code 0 when clean, 1 when problems are found (after --fix: when any remain), 2 when --fix
was refused (403) for some objects (it fixes the others) or had to stop, 130 when Ctrl-C
interrupted --fix, during its last IPAddress too (it stops after the IPAddress under way; the
report says what was deleted), 143 when SIGTERM did, 129 SIGHUP.
Needs RBAC list on services, servicecidrs and ipaddresses; --fix also get on both and delete on
ipaddresses.

${optionsHelp(CHECK_OPTIONS)}`,
  map: (p: string) => `Usage: ${p} map CIDR ${withValue('out', MAP_OPTIONS.out)} [options]
       ${p} map ${withValue('snapshot', MAP_OPTIONS.snapshot)} ${withValue('out', MAP_OPTIONS.out)}

Draws every address of CIDR as a cell on a Hilbert curve, coloured free, allocated, static band
or network/broadcast; past 16,384 addresses a cell is a block, shaded by how full it is. A range
a MetaAllocator skips (status shows it as not allocatable: an IPv6 prefix shorter than /64, for
one) is refused, from a snapshot too. A CIDR in no ServiceCIDR is drawn, with a note saying so.
Needs RBAC list on ipaddresses (networking.k8s.io), and on servicecidrs for that note.

${optionsHelp(MAP_OPTIONS)}`,
};

/** The commands, for a "did you mean" after one that is not. */
const COMMANDS = ['status', 'check', 'map'];

/** What `help` takes besides a command, for the main help: the words that show it, and `version`. */
const MAIN_HELP_TOPICS = ['help', '--help', '-h', 'version', '--version'];

/**
 * An argument as a message quotes it: JSON text, cut after its first characters when long (a
 * pasted file as an argument would otherwise fill the terminal), as the library quotes input.
 */
const quoteArg = (text: string | undefined): string => quoteInput(text);

/**
 * The usage error of a word given where a command goes that is none: `unknown command "stauts"
 * (did you mean status?)`, or, for an option (kubectl takes --kubeconfig/--context before its
 * verb; here options follow the command), `"--context" is an option: …` — its name only, since
 * its value may be a secret (--token=…). `rest`: the words after it, which may name the command.
 */
function notACommand(word: string, rest: readonly string[], prog: string): UsageError {
  if (word.startsWith('-')) {
    const named = rest.find((a) => COMMANDS.includes(a));
    const name = word.split('=')[0]!;
    return new UsageError(
      named === undefined
        ? `${quoteArg(name)} is an option: a command comes first (${COMMANDS.join(', ')}), its options after it`
        : `${quoteArg(name)} is an option: options come after the command (${prog} ${named} ${name} …)`,
    );
  }
  const near = nearestName(word, COMMANDS);
  return new UsageError(`unknown command ${quoteArg(word)}${near === undefined ? '' : ` (did you mean ${near}?)`}`);
}

/** Runs the command; resolves to the exit code. Never throws. */
export async function run(argv: readonly string[], io: Io): Promise<number> {
  const prog = io.prog ?? 'ipallocator';
  // `--` ends the options (POSIX, and Node's parser for a command's own arguments): the word after
  // it is the command as written, even one that starts with a dash
  const optionsEnded = argv[0] === '--';
  const [command, ...rest] = optionsEnded ? argv.slice(1) : argv;
  try {
    if (optionsEnded && command?.startsWith('-')) {
      throw new UsageError(`unknown command ${quoteArg(command)} (after --, which ends the options, the next word is the command)`);
    }
    switch (command) {
      case 'status':
        return await status(rest, io, prog);
      case 'check':
        return await check(rest, io, prog);
      case 'map':
        return await map(rest, io, prog);
      case undefined:
        io.stderr.write(HELP.main(prog));
        return EXIT_ERROR;
      case 'help':
      case '--help':
      case '-h':
        if (rest.length > 0) {
          const topic = rest[0]!;
          // `help status` (`--help status`, `-h status`), as git and kubectl take it: that command's own help
          if (COMMANDS.includes(topic)) return await run([topic, '--help'], io);
          // help of a command there is not is the usage error that command would be
          if (!MAIN_HELP_TOPICS.includes(topic)) throw notACommand(topic, [], prog);
        }
        io.stdout.write(HELP.main(prog));
        return EXIT_CLEAN;
      case 'version':
      case '--version': {
        // as a command's stray words are refused: `--version --bogus` is not quietly the version;
        // `--` ends the options there as after every command (what follows it is an argument)
        const ended = rest[0] === '--';
        const word = ended ? rest[1] : rest[0];
        if (word !== undefined) {
          throw new UsageError(
            !ended && word.startsWith('-')
              ? `${command} takes no options, got ${quoteArg(word.split('=')[0])}`
              : `unexpected argument ${quoteArg(word)}`,
          );
        }
        io.stdout.write(`${packageVersion()}\n`);
        return EXIT_CLEAN;
      }
      default:
        throw notACommand(command, rest, prog);
    }
  } catch (e) {
    // on a terminal, the line may hold a listing's progress: the error starts on a clear line
    const start = io.stderr.isTTY ? CLEAR_LINE : '';
    if (e instanceof UsageError) {
      // escaped as every other message: Node's parser quotes an unknown option as it was given
      // a command's own help lists its options; the main help only the commands
      const help = command !== undefined && COMMANDS.includes(command) ? `${prog} ${command} --help` : `${prog} --help`;
      io.stderr.write(`${start}${prog}: ${shown(e.message)}\nRun '${help}' for usage.\n`);
      return e.exitCode;
    }
    if (e instanceof CliError) {
      io.stderr.write(`${start}${prog}: ${shown(e.message)}\n`);
      return e.exitCode;
    }
    // Deno refused a permission (--allow-env: client-node's dependencies read the environment as
    // they load): its own words name the flag, which is all the operator needs.
    const denied = deniedByRuntime(e);
    if (denied !== undefined) {
      io.stderr.write(`${start}${prog}: Deno denied a permission the command needs: ${shown(denied)}\n`);
      return EXIT_ERROR;
    }
    // A bug: keep the stack, it is what a report needs.
    io.stderr.write(`${start}${prog}: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return EXIT_ERROR;
  }
}

/**
 * The version in the package's package.json, found upward from this file (cli/ in a checkout,
 * dist/cli/ once installed); "unknown" when there is none to read.
 */
function packageVersion(): string {
  // Loaded as a module rather than read as a file: Deno lets an npm package load its own files
  // without --allow-read, as it loads its code, so the installed command needs no permission for
  // its version (a checkout's package.json, outside node_modules, still does).
  const load = createRequire(import.meta.url);
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const json = load(fileURLToPath(new URL('package.json', dir))) as { name?: unknown; version?: unknown };
      if (json.name === 'ipallocator' && typeof json.version === 'string') return json.version;
    } catch (e) {
      // Deno without --allow-read: said, with the flag (the handler of main), not "unknown"
      if (deniedByRuntime(e) !== undefined) throw e;
      // no package.json here (or not JSON): look further up
    }
    if (new URL('..', dir).href === dir.href) return 'unknown';
  }
}

/** The first five names, and how many more: the report (and, at a terminal, the lines above the question) names each. */
function fewOf(names: readonly string[]): string {
  const few = names.slice(0, 5).join(', ');
  return names.length > 5 ? `${few} and ${formatCount(names.length - 5)} more` : few;
}

function parse<T extends OptionTable>(args: readonly string[], table: T, positionals = 0) {
  const options = parserOptions(table);
  const parsed = (() => {
    try {
      // positionals counted below, in the command line's words: Node's refusal of one is its own
      // ("Unexpected argument 'x'. This command does not take positional arguments")
      return parseArgs({ args: [...args], options, allowPositionals: true, strict: true, tokens: true });
    } catch (e) {
      const unknown = unknownOption(e, args, table);
      if (unknown !== undefined) throw new UsageError(unknown);
      const value = optionValueProblem(e, args, table);
      if (value !== undefined) throw new UsageError(value);
      // Node's message may run over lines, each a sentence: one line, as every other message of the CLI.
      throw new UsageError((e as Error).message.replace(/\s*\n\s*/g, ' '));
    }
  })();
  if (parsed.positionals.length > positionals) throw new UsageError(`unexpected argument ${quoteArg(parsed.positionals[positionals])}`);
  // Every option with a value takes one: Node's parser keeps the last and drops the others
  // (`map --out a.svg --out b.svg` wrote only b.svg). A flag given twice says the same thing twice.
  const seen = new Set<string>();
  for (const t of parsed.tokens ?? []) {
    if (t.kind !== 'option' || table[t.name]?.value === undefined) continue;
    if (seen.has(t.name)) throw new UsageError(`--${t.name} is given more than once: it takes one value`);
    seen.add(t.name);
  }
  return parsed;
}

/**
 * Node's refusal of an option `options` does not have, in the command line's words: in lower
 * case as "unknown command", with the nearest option named (`--jsn`: did you mean --json?);
 * undefined for any other parse error. A short flag given a value (`-y=1`) is one: Node reads
 * it as the group `-y -= -1` and refuses `-=`, an option nobody wrote, where the flag's own
 * refusal is due (`-y takes no value`); so is a group of them given one (`-hy=1`, read as
 * `-h -y -= -1`): the value is the last flag's.
 */
function unknownOption(e: unknown, args: readonly string[], table: OptionTable): string | undefined {
  if ((e as { code?: unknown }).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return undefined;
  // Node quotes the option as given, in single quotes: "Unknown option '--jsn'"
  const given = /^Unknown option '(.*?)'(?=\.|$)/s.exec((e as Error).message)?.[1];
  if (given === undefined) return undefined;
  if (given === '-=') {
    const shorts = new Set(Object.values(table).flatMap((o) => (o.short === undefined ? [] : [o.short])));
    for (const a of args) {
      if (a === '--') break;
      const m = /^-([^-=][^=]*)=(.*)$/s.exec(a);
      if (m !== null && [...m[1]!].every((c) => shorts.has(c))) return `-${m[1]!.at(-1)} takes no value, got ${quoteArg(m[2])}`;
    }
  }
  const near = given.startsWith('--') ? nearestName(given.slice(2).split('=')[0]!, Object.keys(table)) : undefined;
  if (near !== undefined) return `unknown option '${given}' (did you mean --${near}?)`;
  // kubectl's way to ask for JSON (the command is also a kubectl plugin): no name is near it
  const kubectlOutput = given === '-o' || given === '--output' || given.startsWith('--output=');
  if (kubectlOutput && Object.hasOwn(table, 'json')) return `unknown option '${given}' (for JSON output, use --json)`;
  // kubectl's namespace flags: the ranges and IPAddresses are cluster-wide, and check reads every Service
  const namespaceFlag = ['-n', '--namespace', '-A', '--all-namespaces'].includes(given.split('=')[0]!);
  if (namespaceFlag) return `unknown option '${given.split('=')[0]}' (a command reads the whole cluster: there is no namespace to choose)`;
  // kubectl's dry run: check changes the cluster only with --fix
  const dryRun = given === '--dry-run' || given.startsWith('--dry-run=');
  if (dryRun && Object.hasOwn(table, 'fix')) return `unknown option '--dry-run' (check without --fix changes nothing: it only reports)`;
  // -o for the output file (map's --out), as many commands spell it
  if (given === '-o' && Object.hasOwn(table, 'out')) return `unknown option '${given}' (did you mean --out?)`;
  return `unknown option '${given}'`;
}

/**
 * Node's refusal of an option's value (ERR_PARSE_ARGS_INVALID_OPTION_VALUE) in the command
 * line's words; undefined for any other parse error. Node's parser stops at the first option
 * whose value is wrong, in the order given: the tokens of a lenient parse of the same arguments
 * (the same tokens, unchecked) find it, whatever Node's wording. A flag given a value
 * (`--json=1`): that it takes none ("Option '--json' does not take an argument"). An option that
 * takes a value:
 *   - given none (`--top` at the end): which value it needs (its OptionValue's `takes`), in Node's words
 *     "Option '--top <value>' argument missing";
 *   - followed by another option of the command, or by `--` (`--top --json`): the value was
 *     left out, said as above, with the option that follows;
 *   - followed by another word starting with a dash (`--top -1`, "argument is ambiguous…"): for
 *     an option that takes a whole number, what it takes (takesRefusal); for any other, how
 *     to give such a value (`--context=-x`).
 */
function optionValueProblem(e: unknown, args: readonly string[], table: OptionTable): string | undefined {
  if ((e as { code?: unknown }).code !== 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return undefined;
  const { tokens } = parseArgs({ args: [...args], options: parserOptions(table), strict: false, allowPositionals: true, tokens: true });
  for (const t of tokens) {
    if (t.kind !== 'option' || !Object.hasOwn(table, t.name)) continue;
    const flag = `--${t.name}`;
    const value = table[t.name]!.value;
    if (value === undefined) {
      if (t.value !== undefined) return `${flag} takes no value, got ${quoteArg(t.value)}`;
      continue;
    }
    const needs = `${flag} needs a value: ${value.takes}`;
    if (t.value === undefined) return needs;
    // a value given as --top=-1 is the value asked for, and checked as any other
    if (t.inlineValue || t.value.length < 2 || !t.value.startsWith('-')) continue;
    const dashed = t.value;
    // a number or a duration that is never negative: what it takes; any other, how to give it
    const unsigned = value.wholeNumber !== undefined || value.duration !== undefined;
    const spelled = unsigned ? '' : `; to give ${quoteText(dashed)} as the value, write ${flag}=${dashed}`;
    if (dashed === '--') return `${needs} (it is followed by --, the end of the options${spelled})`;
    if (isOptionOf(dashed, table)) return `${needs} (it is followed by the option ${dashed}${spelled})`;
    if (unsigned) return takesRefusal(flag, value, dashed);
    return `${flag} is followed by ${quoteText(dashed)}, which starts with a dash: to give it as the value, write ${flag}=${dashed}`;
  }
  return undefined;
}

/** Whether `word` names one of the options of `table`: `--json`, `--top=3`, `-h`. */
function isOptionOf(word: string, table: OptionTable): boolean {
  if (word.startsWith('--')) return Object.hasOwn(table, word.slice(2).split('=')[0]!);
  return word.length === 2 && Object.values(table).some((o) => o.short !== undefined && `-${o.short}` === word);
}

/** What an option says of a value it does not take (a negative whole number included): what it takes. */
function takesRefusal(flag: string, value: OptionValue, text: string): string {
  return `${flag} takes ${value.takes}, got ${quoteArg(text)}`;
}

async function connect(
  values: { kubeconfig?: string | undefined; context?: string | undefined; 'request-timeout'?: string | undefined },
  io: Io,
): Promise<Cluster> {
  const requestTimeoutMs = requestTimeout(values['request-timeout']);
  // Before the import: a client-node whose undici needs a newer Node would end the process (see
  // adapters/kubernetes/client-node-check.ts). cluster.ts sits next to this file, so it resolves
  // client-node from here.
  const mismatch = clientNodeMismatch(import.meta.url);
  if (mismatch !== undefined) throw new CliError(mismatch);
  let mod: typeof import('./cluster.ts');
  try {
    mod = await import('./cluster.ts');
  } catch (e) {
    if ((e as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && String((e as Error).message).includes('@kubernetes/client-node')) {
      throw new CliError(clientNodeMissing(import.meta.url));
    }
    throw e;
  }
  // an empty --kubeconfig or --context is absent, as kubectl (clientcmd) takes it: a script's
  // --kubeconfig="$KC" with KC unset reads the default kubeconfig, not a file named ""
  const options: ClusterOptions = { kubeconfig: values.kubeconfig || undefined, context: values.context || undefined, requestTimeoutMs };
  if (io.stderr.isTTY) {
    let shown = false;
    options.onProgress = (resource, listed, remaining) => {
      const total = remaining === undefined ? '' : ` of ${formatCount(listed + remaining)}`;
      io.stderr.write(`${CLEAR_LINE}listing ${resource}: ${formatCount(listed)}${total}`);
      shown = true;
      if (remaining === 0 && shown) {
        io.stderr.write(CLEAR_LINE);
        shown = false;
      }
    };
  }
  return new mod.Cluster(options);
}

/**
 * What to do without @kubernetes/client-node, which is resolved from where this file is installed
 * (`moduleUrl`), not from the working directory: the install adapters/peer-install.ts finds there
 * (under Deno when `runtime.deno`; by default, whether this is Deno). The command adds npx's
 * cache to the library's cases: the copy npx runs needs the peer installed by npx with it.
 */
export function clientNodeMissing(moduleUrl: string, runtime: { deno: boolean } = { deno: underDeno() }): string {
  const need = 'talking to a cluster needs the package @kubernetes/client-node (a peer dependency)';
  const install = installOf(moduleUrl, runtime.deno);
  switch (install.kind) {
    case 'deno-cache':
      return (
        `${need}, which Deno finds for npm:ipallocator through the deno.json of the directory it runs in: ` +
        'deno add npm:@kubernetes/client-node in that directory, then run deno run -A npm:ipallocator … there'
      );
    case 'deno-folder': {
      const folder = install.folder.startsWith('file:') ? fileURLToPath(install.folder) : install.folder;
      const add = install.laidOutBy === 'deno' ? 'deno add npm:@kubernetes/client-node' : 'npm install @kubernetes/client-node';
      return `${need}, installed next to ipallocator, which Deno loads from the node_modules folder of ${quoteText(folder)}: ${add} in that folder`;
    }
    case 'npx-cache':
      return (
        `${need}, installed next to ipallocator, which npx runs from its own cache: npx -p ipallocator -p @kubernetes/client-node ipallocator …, ` +
        'or npm install ipallocator @kubernetes/client-node in your project and run npx ipallocator there'
      );
    case 'node-project':
      return (
        `${need}, installed next to ipallocator: npm install @kubernetes/client-node in the project that has ipallocator, ` +
        'or npm install -g @kubernetes/client-node for an ipallocator installed with -g'
      );
  }
}

/**
 * The parts of the commands that need the WebAssembly core (with-core.ts). Without WebAssembly
 * (node --jitless, deno --v8-flags=--jitless) the library's import fails with its one-line
 * IPAllocatorError, which the command prints as its error, as it prints every other. The
 * library's message names ipallocator as its subject ("ipallocator needs WebAssembly, …"), for an
 * application's log; after the command's own `ipallocator: ` the subject is the command.
 */
async function loadCore(): Promise<typeof WithCore> {
  try {
    return await import('./with-core.ts');
  } catch (e) {
    if (e instanceof IPAllocatorError) throw new CliError(e.message.replace(/^ipallocator /, 'this command '));
    throw e;
  }
}

/** Back to the start of the terminal line, and erase it (progress lines are drawn over). */
const CLEAR_LINE = '\r\x1b[K';

/** setTimeout's limit (2^31 − 1 ms). */
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * --request-timeout as kubectl reads it (parseDuration), where a negative whole number is refused
 * (client-go's ParseInt wants i ≥ 0, and ParseDuration a unit). Zero or a negative duration means
 * no limit (Infinity), as Go's http.Client takes it. Undefined when the flag is absent or empty
 * (the default applies): client-go parses the flag only when it is non-empty, so
 * `--request-timeout=` is no error.
 */
function requestTimeout(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  const total = parseDuration(text);
  if (total === undefined || (total < 0 && /^-\d+$/.test(text))) {
    throw new UsageError(takesRefusal('--request-timeout', CLUSTER_OPTIONS['request-timeout'].value, text));
  }
  if (total <= 0) return Infinity;
  const ms = Math.max(1, total);
  if (ms > MAX_TIMEOUT_MS) {
    throw new UsageError(`--request-timeout may be at most 596h31m23.647s (2^31 − 1 ms), got ${quoteArg(text)}; 0 waits for ever`);
  }
  return ms;
}

/** The whole number an option of `table` was given (its OptionValue's `wholeNumber`, wholeNumberValue's rule), or its default when absent. */
function wholeNumberOption<T extends OptionTable>(table: T, name: keyof T & string, text: string | undefined): number {
  const value = table[name]!.value!;
  const { fallback, max } = value.wholeNumber!;
  if (text === undefined) return fallback;
  // digits only, so Number() reads it exactly up to 2^53, and anything longer is past max anyway
  if (!/^\d+$/.test(text) || Number(text) > max) throw new UsageError(takesRefusal(`--${name}`, value, text));
  return Number(text);
}

/** The duration an option of `table` was given, in ms (its OptionValue's `duration`: parseDuration, never negative), or its default when absent. */
function durationOption<T extends OptionTable>(table: T, name: keyof T & string, text: string | undefined): number {
  const value = table[name]!.value!;
  const { fallbackMs, maxMs } = value.duration!;
  if (text === undefined) return fallbackMs;
  const ms = parseDuration(text);
  if (ms === undefined || ms < 0 || ms > maxMs) throw new UsageError(takesRefusal(`--${name}`, value, text));
  return ms;
}

// ── --from: a saved listing ──────────────────────────────────────────────────────────────────

/**
 * The file --from names ("-": standard input), or undefined without --from; a UsageError when it
 * is given with an option that only a cluster takes, is empty, or is "-" with standard input a terminal.
 */
function fromOption(
  values: {
    from?: string | undefined;
    kubeconfig?: string | undefined;
    context?: string | undefined;
    'request-timeout'?: string | undefined;
  },
  io: Io,
): string | undefined {
  const from = values.from;
  if (from === undefined) return undefined;
  if (from === '') throw new UsageError(takesRefusal('--from', FROM_OPTION.value, ''));
  for (const flag of ['kubeconfig', 'context', 'request-timeout'] as const) {
    if (values[flag] !== undefined) throw new UsageError(`--from reads a saved listing, not a cluster: --${flag} does not go with it`);
  }
  if (from === '-' && io.stdin.isTTY === true) {
    throw new UsageError('--from - reads the listing from standard input, which is a terminal: pipe it in (< FILE), or name the file');
  }
  return from;
}

/** A saved listing holds at most this much: V8's longest string is a little over 512 MiB. */
const SAVED_LISTING_MAX_BYTES = 500 * 1024 * 1024;

/** A saved listing read as a cluster is by status and check: its objects, and the file named where a cluster's context and server are. */
interface SavedSource {
  readonly context: '';
  readonly server: '';
  /** The file as given, "-" for standard input. */
  readonly from: string;
  serviceCIDRs(): Promise<ListedServiceCIDR[]>;
  ipAddresses(): Promise<ListedIPAddress[]>;
  services(): Promise<ServiceRecord[]>;
  close(): void;
}

/**
 * The listing --from names (`from`: a file, or "-" for standard input) as status and check read a
 * cluster. A file without ServiceCIDRs is refused (every IPAddress would read as outside every
 * range), and one without Services when they are asked for (check would take every IPAddress for
 * an orphan). Throws CliError naming the file.
 */
async function savedListing(from: string, io: Io): Promise<SavedSource> {
  const said = from === '-' ? 'standard input' : quoteText(from);
  const tooLarge = () => new CliError(`${said} is not a saved listing: it holds more than 500 MiB`);
  let text: string;
  if (from === '-') text = await readStdinText(io.stdin, SAVED_LISTING_MAX_BYTES, tooLarge);
  else {
    try {
      text = readFileBounded(
        from,
        SAVED_LISTING_MAX_BYTES,
        tooLarge,
        (what) => new CliError(`${said} is not a saved listing: it is ${what}, not a regular file`),
      );
    } catch (e) {
      if (e instanceof CliError) throw e;
      throw unreadableFile('--from', from, e);
    }
  }
  const listing = readSavedListing(text, said);
  const saveThem = `save them too: ${SAVED_LISTING_COMMAND}`;
  if (listing.serviceCIDRs.length === 0) {
    throw new CliError(
      `${said} holds no ServiceCIDR, and a cluster that gives ClusterIPs from IPAddress objects has at least one: every IPAddress would read as outside every range; ${saveThem}`,
    );
  }
  return {
    context: '',
    server: '',
    from,
    serviceCIDRs: async () => listing.serviceCIDRs,
    ipAddresses: async () => listing.ipAddresses,
    async services() {
      if (listing.services !== undefined) return listing.services;
      throw new CliError(
        `${said} holds no Service: check compares each IPAddress with the Service that holds it, and would take every one for an orphan; ${saveThem}`,
      );
    },
    close() {},
  };
}

// ── status ──────────────────────────────────────────────────────────────────────────────────

async function status(args: readonly string[], io: Io, prog: string): Promise<number> {
  const { values } = parse(args, STATUS_OPTIONS);
  if (values.help) {
    io.stdout.write(HELP.status(prog));
    return EXIT_CLEAN;
  }
  const top = wholeNumberOption(STATUS_OPTIONS, 'top', values.top);
  const from = fromOption(values, io);
  const { summarize, renderStatus } = await loadCore();
  const cluster = from === undefined ? await connect(values, io) : await savedListing(from, io);
  try {
    const serviceCIDRs = await cluster.serviceCIDRs();
    const ipAddresses = await cluster.ipAddresses();
    const report = summarize(cluster, serviceCIDRs, ipAddresses);
    io.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : renderStatus(report, { top }));
    return EXIT_CLEAN;
  } finally {
    cluster.close();
  }
}

// ── check ───────────────────────────────────────────────────────────────────────────────────

/** check --fix with --from, refused: a saved listing is no cluster to delete from. */
const FIX_WITH_FROM = '--fix deletes IPAddress objects from a cluster, and --from reads no cluster: run check --fix without --from';

async function check(args: readonly string[], io: Io, prog: string): Promise<number> {
  const { values } = parse(args, CHECK_OPTIONS);
  if (values.help) {
    io.stdout.write(HELP.check(prog));
    return EXIT_CLEAN;
  }
  if (values.yes && !values.fix) throw new UsageError('--yes only applies with --fix');
  if (values.fix && values.from !== undefined) throw new UsageError(FIX_WITH_FROM);
  const top = wholeNumberOption(CHECK_OPTIONS, 'top', values.top);
  const graceMs = durationOption(CHECK_OPTIONS, 'grace', values.grace);
  // upstream waits that long for a Service whose IPAddress was made first: a shorter grace may
  // take that address from under it, which the operator should know before it happens
  if (values.fix && graceMs < DEFAULT_GRACE_SECONDS * 1000) {
    io.stderr.write(
      `note: --grace ${formatDuration(graceMs)} is shorter than kube-apiserver's ${DEFAULT_GRACE_SECONDS}s: --fix may delete the IPAddress of a Service still being created\n`,
    );
  }
  const now = io.now ?? Date.now;
  const from = fromOption(values, io);
  const { findProblems, fix, notFixedSummary, renderCheck } = await loadCore();
  // a cluster, or a saved listing (which has `from`): only a cluster is fixed
  const cluster = from === undefined ? await connect(values, io) : await savedListing(from, io);
  const saved = 'from' in cluster ? cluster : undefined;
  try {
    const serviceCIDRs = await cluster.serviceCIDRs();
    const ipAddresses = await cluster.ipAddresses();
    const services = await cluster.services();
    const listedBy = saved === undefined ? undefined : saved.from === '-' ? 'standard input lists' : 'the file lists';
    const { findings, pending } = findProblems({ ipAddresses, services, serviceCIDRs }, { now: now(), graceMs, listedBy });
    const report: CheckReport = {
      schema: 'ipallocator/check/v1',
      context: cluster.context,
      server: cluster.server,
      from: saved === undefined ? null : saved.from,
      graceSeconds: graceMs / 1000,
      findings,
      pending,
      fixed: null,
      clean: findings.length === 0,
    };
    const deletable = [...new Set(findings.filter((f) => f.fix === 'delete').map((f) => f.ip))];
    if (values.fix) {
      // refused before anything was read: said here for the types, which cannot see it
      if ('from' in cluster) throw new UsageError(FIX_WITH_FROM);
      let confirmed = values.yes === true || deletable.length === 0;
      if (!confirmed) {
        // A person answering at a terminal sees what would go before saying yes; an answer piped in
        // was given before the question, and the report below lists every finding anyway.
        // the first --top of them: a cluster-wide leak can be 10^5 lines
        if (io.stdin.isTTY === true) {
          const leaks = findings.filter((f) => f.fix === 'delete');
          for (const f of leaks.slice(0, top)) io.stderr.write(`  ${f.kind}: ${shown(f.message)}\n`);
          if (leaks.length > top) io.stderr.write(`  … and ${formatCount(leaks.length - top)} more (--top N lists more here)\n`);
        }
        io.stderr.write(`Delete ${counted(deletable.length, 'IPAddress object')} (${shown(fewOf(deletable.map(named)))})? [y/N] `);
        const answer = await readLine(io.stdin);
        if (answer === undefined) io.stderr.write('\n');
        confirmed = answer !== undefined && /^\s*y(es)?\s*$/i.test(answer);
      }
      report.fixed = confirmed
        ? await fixInterruptibly(io, (options) => fix(cluster, findings, { now, graceMs, listed: ipAddresses, ...options }))
        : { deleted: [], skipped: [], failed: [], stoppedBy: null, untried: [], declined: true };
      // clean when every finding was a leak that is gone now: deleted, or settled by someone else meanwhile
      const settled = new Set([...report.fixed.deleted, ...report.fixed.skipped.filter((k) => k.resolved).map((k) => k.ip)]);
      report.clean = findings.every((f) => f.fix === 'delete' && settled.has(f.ip));
    }
    io.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : renderCheck(report, { top, piped: io.stdin.isTTY !== true }));
    // fixing stopped at an error about the cluster, not about a leak: exit 2, as the same error
    // would have ended the listing
    const stopped = report.fixed?.stoppedBy ?? null;
    if (stopped !== null) {
      const bySignal = Object.values(STOP_SIGNALS).find((s) => s.stoppedBy === stopped);
      throw new CliError(`--fix stopped: ${stopped}`, bySignal?.exitCode ?? EXIT_ERROR);
    }
    // a permission refused for some objects: exit 2, as a refused listing, after fixing the others
    const denied = report.fixed?.failed.filter((e) => e.denied).map((e) => e.ip) ?? [];
    if (denied.length > 0) {
      const summary = notFixedSummary(report.fixed!)!;
      throw new CliError(
        `--fix was refused (403 Forbidden) for ${denied.length === 1 ? 'IPAddress' : `${formatCount(denied.length)} IPAddresses:`} ${shown(fewOf(denied.map(named)))}; ${summary[0]!.toLowerCase()}${summary.slice(1, -1)}`,
      );
    }
    return report.clean ? EXIT_CLEAN : EXIT_FOUND;
  } finally {
    cluster.close();
  }
}

/**
 * Runs the deletes of `check --fix` so that the operator can follow them and stop them: on a
 * terminal a progress line (a cluster-wide fix sends three requests per leak, thousands of them);
 * elsewhere (a log: a Job, CI) one line per IPAddress deleted, in the order of the report, as
 * soon as every leak before it has settled, so that even a run killed outright leaves a record of
 * what it changed. A signal (Ctrl-C, SIGTERM, SIGHUP) stops after the leaks under way, so that
 * the report still names every IPAddress deleted (ended at once, the command would print nothing
 * of what it did).
 */
async function fixInterruptibly(
  io: Io,
  run: (options: {
    signal: AbortSignal;
    onProgress?: (settled: number, total: number) => void;
    onDeleted?: (name: string) => void;
    onUnderWay?: (count: number) => void;
  }) => Promise<FixResult>,
): Promise<FixResult> {
  const stop = new AbortController();
  let underWay = 0;
  const release = io.onInterrupt?.((signal) => {
    stop.abort(signal);
    const again = signal === 'SIGINT' ? 'interrupt again' : `a second ${signal}`;
    const leaks = underWay > 1 ? `the ${underWay} IPAddresses under way` : 'the IPAddress under way';
    io.stderr.write(
      `${io.stderr.isTTY ? CLEAR_LINE : ''}${STOP_SIGNALS[signal].said}: stopping after ${leaks} (${again} to end at once).\n`,
    );
  });
  let progress = false;
  const onProgress = (settled: number, total: number) => {
    io.stderr.write(`${CLEAR_LINE}fixing ipaddresses: ${formatCount(settled)} of ${formatCount(total)}`);
    progress = true;
  };
  const onDeleted = (name: string) => io.stderr.write(`deleted IPAddress ${shown(named(name))}\n`);
  const onUnderWay = (count: number) => {
    underWay = count;
  };
  try {
    return await run({ signal: stop.signal, onUnderWay, ...(io.stderr.isTTY ? { onProgress } : { onDeleted }) });
  } finally {
    release?.();
    if (progress) io.stderr.write(CLEAR_LINE);
  }
}

/** One line from `input`, or undefined when it ends first. */
async function readLine(input: Readable): Promise<string | undefined> {
  const rl = createInterface({ input, terminal: false });
  try {
    for await (const line of rl) return line;
    return undefined;
  } finally {
    rl.close();
  }
}

// ── map ─────────────────────────────────────────────────────────────────────────────────────

/**
 * The prefix `text` names, or a UsageError saying why not (the parser's reason); a range that
 * cannot be drawn is refused by refuseUndrawable.
 */
function cidrToDraw(core: typeof WithCore, text: string): Prefix {
  let prefix: Prefix;
  try {
    prefix = core.Prefix.parse(text);
  } catch (e) {
    const reason = e instanceof InvalidCIDRError ? e.reason : (e as Error).message;
    throw new UsageError(`${quoteArg(text)} is not a CIDR such as 10.96.0.0/12 or fd00:10:96::/108: ${reason}`);
  }
  refuseUndrawable(core, prefix, text);
  return prefix;
}

/**
 * Draws only what `status` counts: a range this package's MetaAllocator skips (rangeSkipReason)
 * is refused with its reason as `status` says it (skipReason), the same line whether the range comes from the command line or
 * from a snapshot file (`text` is the CIDR as given, or the snapshot's range). That covers an
 * IPv6 prefix shorter than /64, which Range takes but holds only the first 2^64 − 1 addresses
 * of, so the rest would have no place in the map's count.
 */
function refuseUndrawable(core: typeof WithCore, prefix: Prefix, text: string): void {
  const skipped = core.skipReason(prefix);
  if (skipped !== undefined) throw new CliError(`cannot draw ${quoteArg(text)}: ${skipped}`);
}

async function map(args: readonly string[], io: Io, prog: string): Promise<number> {
  const { values, positionals } = parse(args, MAP_OPTIONS, 1);
  if (values.help) {
    io.stdout.write(HELP.map(prog));
    return EXIT_CLEAN;
  }
  // empty is no file ("cannot read : ENOENT" said nothing of the flag); unlike an empty
  // --kubeconfig, there is no default file it could stand for
  for (const flag of ['out', 'snapshot'] as const) {
    if (values[flag] === '') throw new UsageError(takesRefusal(`--${flag}`, MAP_OPTIONS[flag].value, ''));
  }
  // `-` is standard output, and for --snapshot standard input, as for most commands that
  // write or read a file; a file named so is ./-
  const outFile = values.out === '-' ? undefined : values.out;
  const snapshotFile = values.snapshot === '-' ? undefined : values.snapshot;
  const cidrText = positionals[0];
  if (cidrText === undefined && values.snapshot === undefined) {
    throw new UsageError(`map needs a CIDR, or ${withValue('snapshot', MAP_OPTIONS.snapshot)}`);
  }
  if (values.out === undefined && io.stdout.isTTY) {
    throw new UsageError(`map writes SVG: pass ${withValue('out', MAP_OPTIONS.out)} (or redirect the output)`);
  }
  // The file read (the snapshot, or a file of the kubeconfig: below) would be replaced by the
  // SVG, and the one copy of its Range's state, or of the cluster's credentials, gone
  if (values.snapshot === '-' && io.stdin.isTTY === true) {
    throw new UsageError('--snapshot - reads the snapshot from standard input, which is a terminal: pipe it in (< FILE), or name the file');
  }
  if (outFile !== undefined && snapshotFile !== undefined && sameFile(outFile, snapshotFile)) {
    throw new UsageError(
      `--out ${quoteText(outFile)} is the snapshot file it reads (--snapshot ${quoteText(snapshotFile)}): the SVG would replace it; write it elsewhere`,
    );
  }
  // before the listing, which takes a while on a large cluster, and is lost when the write fails
  const unwritable = outFile === undefined ? undefined : outProblem(outFile);
  if (unwritable !== undefined) throw new UsageError(unwritable);
  const core = await loadCore();
  const { emptyMap, markAllocated, offsetIn, parseAddress, allocatedAddress, onePerName, renderSVG } = core;
  let prefix = cidrText === undefined ? undefined : cidrToDraw(core, cidrText);

  let rangeMap: RangeMap;
  let source: string;
  if (values.snapshot !== undefined) {
    const said = snapshotFile === undefined ? 'standard input' : quoteText(snapshotFile);
    const range =
      snapshotFile === undefined
        ? parseSnapshot(core, await readStdinText(io.stdin, SNAPSHOT_MAX_BYTES, () => snapshotTooLarge('standard input')), said)
        : readSnapshot(core, snapshotFile);
    try {
      if (prefix !== undefined && prefix.cidr !== range.cidr) {
        throw new UsageError(`the snapshot in ${said} is of ${range.cidr}, not ${prefix.cidr}`);
      }
      refuseUndrawable(core, range.prefix, range.cidr);
      prefix = range.prefix;
      rangeMap = emptyMap(prefix);
      range.forEach((ip) => {
        const at = offsetIn(range.prefix, parseAddress(ip)!)!;
        markAllocated(rangeMap, at[0], at[1]);
      });
    } finally {
      range.destroy();
    }
    source = snapshotFile === undefined ? 'Range snapshot from standard input' : `Range snapshot ${named(snapshotFile)}`;
  } else {
    const cluster = await connect(values, io);
    // before any request: every file the kubeconfig was read from, --kubeconfig's or the default
    // ones ($KUBECONFIG's, ~/.kube/config), as the one loader found them
    const kubeconfig = outFile === undefined ? undefined : cluster.kubeconfigFiles.find((f) => sameFile(outFile, f.path));
    if (outFile !== undefined && kubeconfig !== undefined) {
      throw new UsageError(
        `--out ${quoteText(outFile)} is the kubeconfig it reads (${kubeconfig.said}): the SVG would replace it; write it elsewhere`,
      );
    }
    rangeMap = emptyMap(prefix!);
    let listed: ListedIPAddress[];
    let serviceCIDRs: ListedServiceCIDR[] | Error;
    try {
      listed = await cluster.ipAddresses();
      // only for the note below: a map is drawn whatever stops this listing (a 403 for an identity
      // that may list IPAddresses alone, a 5xx, a timeout, a malformed listing); the note says why
      serviceCIDRs = await cluster.serviceCIDRs().catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
    } finally {
      cluster.close();
    }
    const note = outsideNote(core, prefix!, serviceCIDRs, cluster.context);
    if (note !== undefined) io.stderr.write(`${prog}: note: ${shown(note)}\n`);
    // a name listed more than once (a broken server or proxy) is one address, as `status` counts it
    for (const r of onePerName(listed).ipAddresses) {
      const addr = allocatedAddress(r.name);
      const at = addr === undefined ? undefined : offsetIn(prefix!, addr);
      if (at !== undefined) markAllocated(rangeMap, at[0], at[1]);
    }
    // named as status and check name it: a control character would make the SVG no XML at all
    source = `IPAddress objects of context ${named(cluster.context)}`;
  }

  const svg = renderSVG(rangeMap, source);
  if (outFile === undefined) {
    io.stdout.write(svg);
    return EXIT_CLEAN;
  }
  try {
    writeFileSync(outFile, svg);
  } catch (e) {
    throw new CliError(`cannot write the file --out names (${quoteText(outFile)}): ${fsFailure(e) ?? (e as Error).message}`);
  }
  const t = rangeMap.totals;
  const perCell = rangeMap.blockBits === 0 ? '1 address' : `${formatCount(1n << BigInt(rangeMap.blockBits))} addresses`;
  io.stdout.write(
    `wrote ${quoteText(outFile)}: ${rangeMap.prefix.cidr}, ${formatCount(2 ** rangeMap.cellBits)} ${rangeMap.cellBits === 0 ? 'cell' : 'cells'} of ${perCell}; ${formatCount(t.used)} of ${counted(t.size, 'address', 'addresses')} allocated\n`,
  );
  return EXIT_CLEAN;
}

/**
 * What a map of `prefix` drawn from the cluster is to be told with: that no ServiceCIDR's range
 * overlaps it, so that nothing allocates from it and the map shows only IPAddresses made outside
 * every range (`status` lists those apart), with the ranges there are; or that this could not be
 * told, the listing of ServiceCIDRs having failed (`serviceCIDRs` is its error). Undefined when a
 * range overlaps it (holds it, lies in it, or shares part of it), served or not: such a range is
 * inside a ServiceCIDR for both commands (DESIGN.md, invariant 5).
 */
function outsideNote(
  core: typeof WithCore,
  prefix: Prefix,
  serviceCIDRs: readonly ListedServiceCIDR[] | Error,
  context: string,
): string | undefined {
  if (serviceCIDRs instanceof Error) return `cannot tell whether ${prefix.cidr} is in a ServiceCIDR: ${serviceCIDRs.message}`;
  const ranges = serviceCIDRs.flatMap(core.rangesOf);
  const overlaps = (p: Prefix | undefined) =>
    p !== undefined && (p.contains(prefix.version, prefix.network) || prefix.contains(p.version, p.network));
  if (ranges.some((r) => overlaps(r.prefix))) return undefined;
  const there =
    serviceCIDRs.length === 0
      ? 'it has none'
      : fewOf(serviceCIDRs.map((sc) => `${named(sc.name)}: ${sc.cidrs.map((cidr) => named(cidr)).join(', ')}`));
  return `${prefix.cidr} is in no ServiceCIDR of context ${quoteText(context)} (${there}): no Service is given a ClusterIP from it`;
}

/**
 * Why map's `--out` cannot be written, as far as can be told before writing: it names a folder,
 * or a file in a folder that does not exist or is a file. Undefined otherwise (the write says
 * what else stops it: a permission, a full disk), and when the look itself is refused (EACCES on
 * a folder of the path; Deno without `--allow-read`, which may still allow the write).
 */
function outProblem(out: string): string | undefined {
  const UNKNOWN = 'unknown';
  const stat = (path: string) => {
    try {
      return statSync(path, { throwIfNoEntry: false });
    } catch (e) {
      // ENOTDIR: a file where a folder of the path belongs, said of the folder below
      return (e as { code?: unknown }).code === 'ENOTDIR' ? undefined : UNKNOWN;
    }
  };
  const target = stat(out);
  if (target === UNKNOWN) return undefined;
  if (target !== undefined)
    return target.isDirectory() ? `--out ${quoteText(out)} is a folder: name the file to write the SVG to` : undefined;
  const folder = dirname(out);
  const parent = stat(folder);
  if (parent === UNKNOWN) return undefined;
  if (parent === undefined) return `--out ${quoteText(out)}: the folder ${quoteText(folder)} does not exist`;
  return parent.isDirectory() ? undefined : `--out ${quoteText(out)}: ${quoteText(folder)} is not a folder`;
}

/**
 * Whether two paths name one existing regular file (a link to it, or another spelling, included):
 * one the SVG would replace. A device (`/dev/null`, a terminal) or a pipe holds nothing to lose.
 */
function sameFile(a: string, b: string): boolean {
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.isFile() && x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false; // one does not exist (yet): --out creates it, or the read says why not
  }
}

/**
 * The most a snapshot file may hold: 128 MiB. The largest the README speaks of, a Range of 10^7
 * addresses in a /64, snapshots as 8 bytes per address (offsets): 80,000,000 bytes, 106,666,668
 * in base64 — about 102 MiB with its JSON as `JSON.stringify(range.snapshot())` writes it (103 MiB
 * with `base64`'s line break every 76 characters).
 * The bound leaves a quarter more. A file without end (/dev/zero, a pipe) is no regular file,
 * and not read (readFileBounded).
 */
const SNAPSHOT_MAX_BYTES = 128 * 1024 * 1024;

/** What a snapshot past SNAPSHOT_MAX_BYTES is refused with; `said` names the file, or standard input. */
const snapshotTooLarge = (said: string) =>
  new CliError(`${said} is not a snapshot file: it holds more than 128 MiB (a snapshot of 10^7 addresses in a /64 is about 102 MiB)`);

/** Reads a snapshot file (at most SNAPSHOT_MAX_BYTES; see parseSnapshot). Throws CliError naming the file. */
function readSnapshot(core: typeof WithCore, path: string): Range {
  const said = quoteText(path);
  const notAFile = (what: string) => new CliError(`${said} is not a snapshot file: it is ${what}, not a regular file`);
  let text: string;
  try {
    text = readFileBounded(path, SNAPSHOT_MAX_BYTES, () => snapshotTooLarge(said), notAFile);
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw unreadableFile('--snapshot', path, e);
  }
  return parseSnapshot(core, text, said);
}

/** Standard input (`--snapshot -`, `--from -`) as text, read to its end; past `maxBytes`, `tooLarge()` is thrown. */
async function readStdinText(input: Readable, maxBytes: number, tooLarge: () => Error): Promise<string> {
  const pieces: Buffer[] = [];
  let held = 0;
  for await (const chunk of input) {
    const piece = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    held += piece.length;
    // past the bound, read no further: a pipe from something without end (`cat /dev/zero |`) ends here
    if (held > maxBytes) throw tooLarge();
    pieces.push(piece);
  }
  return Buffer.concat(pieces, held).toString('utf8');
}

/**
 * A snapshot's text as a Range: a RangeSnapshot as JSON, its data in base64 —
 * {"range": CIDR, "data": base64, "length": n, "checksum": crc32}. With length and checksum the
 * copy is verified (Range.fromSnapshot); one with only range and data is restored as it is.
 * Throws CliError naming the snapshot as `said` (the file's path quoted, or standard input).
 */
function parseSnapshot(core: typeof WithCore, text: string, said: string): Range {
  const expected = 'expected {"range": "<cidr>", "data": "<base64>", "length": <n>, "checksum": <crc32>}';
  let parsed: unknown;
  try {
    // a byte order mark, as some editors on Windows save UTF-8, is no part of the JSON
    parsed = JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text);
  } catch {
    throw new CliError(`${said} is not a snapshot file: not JSON (${expected})`);
  }
  const snap = parsed as { range?: unknown; data?: unknown; length?: unknown; checksum?: unknown };
  if (typeof snap !== 'object' || snap === null || typeof snap.range !== 'string' || typeof snap.data !== 'string') {
    throw new CliError(`${said} is not a snapshot file: ${expected}`);
  }
  // Line breaks are left out, as `base64 -d` leaves them out: `base64` wraps its output
  // at 76 characters, and a snapshot's data pasted from it must read the same.
  const base64 = snap.data.replace(/\r?\n/g, '');
  // Whole groups of four characters once padded: a lone character past them holds no byte, and
  // padding is only ever what completes the last group.
  const digits = base64.replace(/=+$/, '').length;
  const padded = base64.length !== digits;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64) || digits % 4 === 1 || (padded && base64.length % 4 !== 0)) {
    throw new CliError(`${said}: the snapshot's data is not base64 (A–Z, a–z, 0–9, + and /, then at most two =)`);
  }
  const data = new Uint8Array(Buffer.from(base64, 'base64'));
  try {
    if (snap.length !== undefined || snap.checksum !== undefined) {
      const snapshot = { range: snap.range, data, length: snap.length, checksum: snap.checksum };
      return core.Range.fromSnapshot(snapshot as Parameters<typeof Range.fromSnapshot>[0]);
    }
    const range = new core.Range(snap.range);
    try {
      range.restore(snap.range, data);
    } catch (e) {
      range.destroy();
      throw e;
    }
    return range;
  } catch (e) {
    if (e instanceof IPAllocatorError) throw new CliError(`${said}: ${e.message}`);
    throw e;
  }
}
