// The line charts `npm run bench:strategies` draws (bench/strategies/chart.ts): one line per
// strategy, each told apart from every other by its colour or its dash pattern.
import { describe, expect, it } from 'vitest';
import { STRATEGY_NAMES } from '../adapters/builtin-strategies.ts';
import { type LineStyle, lineChart, OWN_STYLES, ownStyle, STRATEGY_STYLES, type Series } from '../bench/strategies/chart.ts';

/** The run's own strategies, then `own` of yours, each with its line. */
function styled(own: number): { name: string; style: LineStyle }[] {
  return [
    ...Object.entries(STRATEGY_STYLES).map(([name, style]) => ({ name, style })),
    ...Array.from({ length: own }, (_, i) => ({ name: `mine-${i}`, style: ownStyle(i) })),
  ];
}

/** The look of each line lineChart drew, as its stroke and dash attributes say. */
function drawnLooks(svg: string): string[] {
  return [...svg.matchAll(/<polyline [^>]*?stroke="([^"]*)"[^>]*?(?:stroke-dasharray="([^"]*)")?\/>/g)].map(
    (m) => `${m[1]} ${m[2] ?? 'solid'}`,
  );
}

describe('bench:strategies charts: a look per strategy', () => {
  it('every built-in has a line of its own', () => {
    for (const name of STRATEGY_NAMES) expect(STRATEGY_STYLES[name], name).toBeDefined();
  });

  it('tells apart OWN_STYLES (at least 24) strategies of your own, beside the built-ins and their cool-downs', () => {
    expect(OWN_STYLES).toBeGreaterThanOrEqual(24);
    const lines = styled(OWN_STYLES);
    const series: Series[] = lines.map(({ name, style }) => ({
      name,
      ...style,
      points: [
        [0, 1],
        [1, 2],
      ],
    }));
    const svg = lineChart({ title: 't', subtitle: 's', xLabel: 'x', yLabel: 'y', xTicks: [0, 1], yTicks: [0, 2], series });
    const looks = drawnLooks(svg);
    expect(looks).toHaveLength(lines.length);
    // the first two lines of one look, named, when any two share one
    const seen = new Map<string, string>();
    for (const [i, look] of looks.entries()) {
      expect(seen.get(look), `${lines[i]!.name} is drawn as ${look}`).toBeUndefined();
      seen.set(look, lines[i]!.name);
    }
  });
});
