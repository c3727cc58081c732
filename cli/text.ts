// Terminal text: counts with thousands separators, percentages, bars, aligned columns.
//
// Every line `status` and `check` print, `check --fix`'s question and the one-line errors go
// through `shown` (a table's cells too): names and messages come from the cluster, and whoever
// can create an IPAddress can put control characters in its parentRef — an escape sequence would
// clear the screen or forge a line of the report. (`map` prints only its own counts; its SVG
// escapes XML, and names its context and snapshot file with `named`: a control character would
// make it no XML at all.) Each name is also cut (`named`), as the library cuts a Status message: an owner
// named in 100,000 characters would otherwise fill the screen.
import { formatCount, quoteText, showUnseen } from '../adapters/quote.ts';
import { cutMessage } from '../adapters/kubernetes/bodies.ts';

/** Text from the cluster as the terminal should show it: every control or invisible character escaped (`\u001b`). */
export const shown = showUnseen;

/**
 * A name from the cluster (an IPAddress, an owner, a namespace, a ServiceCIDR, a CIDR as written)
 * as a report shows it: cut at 1,000 characters as the library cuts a Status message
 * (cutMessage), far beyond any name the API server accepts (253); and in double quotes, escaped
 * as Go's %q (quoteText: `"10.96.0.2 "`, `"web\u200b"`), when it would not read as itself:
 * empty, with a space at either end (invisible at the end of a line or before a column's padding)
 * or two in a row (the gap between columns), or holding a quote, a backslash or a character
 * a reader cannot see. Any other name is shown as it is.
 */
export function named(text: string): string {
  const cut = cutMessage(text);
  const quoted = quoteText(cut);
  const readsAsItself = cut !== '' && !/^ | $| {2}/.test(cut) && quoted === `"${cut}"`;
  return readsAsItself ? cut : quoted;
}

// formatCount's home is adapters/quote.ts: the library's messages write counts as the command's do
export { formatCount };

/**
 * 12.345 → "12.3 %"; 0.004 (but not zero) → "<0.1 %"; 99.96 (but not 100) → ">99.9 %". Neither
 * end rounds to a value it has not reached: a range with one address left never reads 100.0 %,
 * one with one in use never 0.0 %.
 */
export function percent(p: number): string {
  if (p > 0 && p < 0.05) return '<0.1 %';
  const shown = p.toFixed(1);
  if (p < 100 && shown === '100.0') return '>99.9 %';
  return `${shown} %`;
}

export const BAR_WIDTH = 20;

/** A bar of BAR_WIDTH characters filled to `fraction`; at least one filled when `any` is true. */
export function bar(fraction: number, any: boolean): string {
  let filled = Math.round(Math.min(1, Math.max(0, fraction)) * BAR_WIDTH);
  if (filled === 0 && any) filled = 1;
  if (filled === BAR_WIDTH && fraction < 1) filled = BAR_WIDTH - 1;
  return '█'.repeat(filled) + '░'.repeat(BAR_WIDTH - filled);
}

/**
 * The widest a cell of a column followed by another may be, in characters: any address or CIDR
 * in canonical form fits (an IPv6 /128 is 43), after a table's two-space indent and between
 * quotes. A longer one (a name from the cluster: a namespace, an owner, an IPAddress named
 * otherwise) is cut with an ellipsis, as kubectl cuts long values: else every row of its table
 * would be padded as wide as it. The last cell of a row, padding nothing, runs to the end of the
 * line; `--json` has every name whole.
 */
export const CELL_WIDTH = 48;

/** `cell` cut to CELL_WIDTH characters, the last an ellipsis, when it is longer. */
function clipped(cell: string): string {
  if (cell.length <= CELL_WIDTH) return cell; // no more characters than code units
  const chars = [...cell];
  return chars.length <= CELL_WIDTH ? cell : `${chars.slice(0, CELL_WIDTH - 1).join('')}…`;
}

/**
 * Appends `lines` to `out`, one at a time: `out.push(...lines)` passes each line as an argument,
 * and a table of 10^5 rows (a check's findings, a list with a large --top) overflows the stack.
 */
export function appendLines(out: string[], lines: readonly string[]): void {
  for (const line of lines) out.push(line);
}

/**
 * Rows aligned in columns two spaces apart; `right[i]` right-aligns column i. A row with fewer
 * cells than the longest ends in a cell that runs to the end of the line (a refused range's
 * reason in place of its bar and counts): it sets no column's width, or every other row would be
 * padded as wide as that text. `names[i]` marks column i as holding names from the cluster: a
 * cell of it followed by another is cut at CELL_WIDTH characters. Text this tool wrote (counts,
 * bars, states) is never cut: a /64's counts are longer than any address.
 */
export function table(rows: string[][], right: boolean[], names: boolean[]): string[] {
  rows = rows.map((row) => row.map((cell, i) => (names[i] && i !== row.length - 1 ? clipped(shown(cell)) : shown(cell))));
  const cells = rows.reduce((most, row) => Math.max(most, row.length), 0); // not spread: a check may list 10^5 rows
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      if (row.length < cells && i === row.length - 1) return;
      widths[i] = Math.max(widths[i] ?? 0, [...cell].length);
    });
  }
  return rows.map((row) =>
    row
      .map((cell, i) => {
        const pad = ' '.repeat(Math.max(0, (widths[i] ?? 0) - [...cell].length));
        return right[i] ? pad + cell : i === row.length - 1 ? cell : cell + pad;
      })
      .join('  ')
      .trimEnd(),
  );
}

/** "1 IPAddress", "2 IPAddresses": a count and the noun, plural unless the count is 1. */
export function counted(n: number | bigint | string, singular: string, plural = `${singular}s`): string {
  return `${formatCount(n)} ${String(n) === '1' ? singular : plural}`;
}

/**
 * The first `top` of `items` to list, and the line that says how many are left out (undefined
 * when none is): `  … and 1,234 more (--json lists all)`.
 */
export function firstOf<T>(items: readonly T[], top: number): { shown: T[]; more: string | undefined } {
  const shown = items.slice(0, top);
  const left = items.length - shown.length;
  return { shown, more: left > 0 ? `  … and ${formatCount(left)} more (--json lists all)` : undefined };
}

/**
 * What holds an object marked for deletion, given its finalizers, as `check` and `--fix` say it
 * (here, not in cluster.ts: `check` reads it without loading client-node).
 */
export function markedForDeletion(finalizers: readonly unknown[]): string {
  return finalizers.length > 0
    ? `marked for deletion: a finalizer holds it (${showUnseen(cutMessage(finalizers.map(String).join(', ')))})`
    : 'marked for deletion, not removed yet';
}

/** What a report was made from, for its text: `context "x"`, `file cluster.json`, or standard input. */
export function sourceText(report: { context: string; from: string | null }): string {
  if (report.from === null) return `context ${named(report.context)}`;
  return report.from === '-' ? 'standard input' : `file ${named(report.from)}`;
}
