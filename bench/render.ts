// Writes a run's Markdown again from its JSON, without running anything: the results page
// (<prefix>.md, which the npm package ships for latest) and the targets page (<prefix>.targets.md,
// the project's goals, not shipped). For a change to how results are presented, so the committed
// numbers need no new run.
//
//   npx tsx bench/render.ts                      bench/results/latest.json → latest.md, latest.targets.md
//   npx tsx bench/render.ts <prefix>.json        another run's results (a --quick or --out run)
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { IMPL_NAMES } from './impl.ts';
import { type Results, writeMarkdown } from './report.ts';

const json = process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), 'results', 'latest.json');
const res = JSON.parse(fs.readFileSync(json, 'utf8')) as Results;
const outPrefix = json.replace(/\.json$/, '');
// the columns in the order a run shows them (bench/run.ts): each implementation, then its --baseline column
const present = new Set(res.rows.map((r) => r.impl));
const shown = IMPL_NAMES.flatMap((n) => [n, ...[...present].filter((i) => i.startsWith(`${n}@`))]).filter((i) => present.has(i));
writeMarkdown(outPrefix, res, shown, `${path.basename(outPrefix)}.svg`);
process.stdout.write(`wrote ${outPrefix}.md and ${path.basename(outPrefix)}.targets.md from ${json}\n`);
