// Durations as the command line reads and writes them (--request-timeout, --grace): read as
// kubectl reads --request-timeout, written back in the shortest form that reads back the same.

/** Go's duration units (time.ParseDuration), in milliseconds; µ as U+00B5 and U+03BC, as Go takes both. */
const DURATION_UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  '\u00b5s': 1e-3,
  '\u03bcs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const GO_DURATION = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h))+$/;

/**
 * A duration as kubectl's --request-timeout reads it (client-go's ParseTimeout), in milliseconds:
 * a whole number of seconds (a sign allowed), or a Go duration (`500ms`, `2m`, `1m30s`, `1.5h`,
 * `+250ms`, `-1s`); a part of a millisecond counts as a whole one. Undefined when it is neither.
 * The one reading of every option that takes a duration (--request-timeout, --grace).
 */
export function parseDuration(text: string): number | undefined {
  let total = 0;
  // the sign is applied last, to the whole
  if (/^[+-]?\d+$/.test(text)) total = Number(text.replace(/^[+-]/, '')) * 1000;
  else if (GO_DURATION.test(text)) {
    for (const [, amount, unit] of text.matchAll(/(\d+\.?\d*|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/g))
      total += Number(amount) * DURATION_UNITS[unit!]!;
  } else return undefined;
  // to the microsecond first: 2.007s is 2006.9999999999998 ms in floating point, not 2008 ms
  const ms = Math.ceil(Math.round(total * 1000) / 1000);
  return text.startsWith('-') ? -ms : ms;
}

/**
 * A whole number of milliseconds (≥ 0) as a user writes a duration, which parseDuration reads
 * back as the same number: hours, minutes and seconds with the parts that are 0 left out, a part
 * of a second as decimals (`2m`, `1m30s`, `1h0.25s`), below a second in ms (`500ms`), `0s` for 0.
 */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return `${h > 0 ? `${h}h` : ''}${m > 0 ? `${m}m` : ''}${s > 0 ? `${s}s` : ''}`;
}
