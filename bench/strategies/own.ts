// Strategies of your own in `npm run bench:strategies` (`--strategy <module>`, repeatable): each
// module is imported, and every AllocationStrategy it exports (docs/strategies.md, "Your own
// strategy") runs beside the built-ins, named by its `name`. Read before anything is simulated:
// a module that cannot be imported, exports no strategy, names one as a built-in or another
// module's strategy is named, or one that fails either of two allocateNext calls on an empty range
// is a usage error (one line, exit 2).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ErrFull } from '../../adapters/errors.ts';
import { Range } from '../../adapters/range.ts';
import type { AllocationStrategy } from '../../adapters/strategy.ts';
import { UsageError } from '../args.ts';
import type { StrategySpec } from './sim.ts';

/** A strategy of your own, and the module (as given to --strategy) it came from. */
export interface OwnStrategy {
  readonly name: string;
  readonly module: string;
  readonly spec: StrategySpec;
}

/** An export that is an AllocationStrategy: an object with a non-empty name and a forRange method. */
function isStrategy(value: unknown): value is AllocationStrategy {
  if (typeof value !== 'object' || value === null) return false;
  const { name, forRange } = value as { name?: unknown; forRange?: unknown };
  return typeof name === 'string' && name !== '' && typeof forRange === 'function';
}

/** The ranges a strategy is tried on when it is taken: the smallest and largest the run uses. */
const TRIAL_CIDRS = ['10.96.0.0/24', 'fd00:10:96::/64'];

/**
 * The strategies the modules at `paths` (relative to the working directory) export, in the order
 * of the paths and, within a module, of its exports (one exported under two names counts once).
 * `taken` are the names of the run's own lines (the built-ins, with and without a cool-down): a
 * strategy named as one of them, or as another one of yours, is refused; so is one whose chooser a
 * Range refuses, or whose first two allocateNext calls fail other than with ErrFull (tried on an
 * empty /24 and an empty /64).
 */
export async function ownStrategies(paths: readonly string[], taken: readonly string[]): Promise<OwnStrategy[]> {
  const out: OwnStrategy[] = [];
  for (const path of paths) {
    let exports: Record<string, unknown>;
    try {
      exports = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
    } catch (e) {
      throw new UsageError(`--strategy ${path}: cannot import it: ${firstLine(e)}`);
    }
    const found = [...new Set(Object.values(exports).filter(isStrategy))];
    if (found.length === 0) {
      const names = Object.keys(exports);
      throw new UsageError(
        `--strategy ${path} exports no AllocationStrategy (an object with a name and a forRange(view) method; exports: ${names.length > 0 ? names.join(', ') : 'none'})`,
      );
    }
    for (const strategy of found) {
      const name = strategy.name;
      if (taken.includes(name)) {
        throw new UsageError(`--strategy ${path}: a strategy named '${name}' is one of the run's own; give yours another name`);
      }
      const twin = out.find((o) => o.name === name);
      if (twin !== undefined) {
        throw new UsageError(`--strategy ${path}: a strategy named '${name}' also comes from ${twin.module}; give one another name`);
      }
      for (const cidr of TRIAL_CIDRS) {
        let range: Range;
        try {
          range = new Range(cidr, { strategy });
        } catch (e) {
          throw new UsageError(`--strategy ${path}: a Range on ${cidr} refuses '${name}': ${firstLine(e)}`);
        }
        try {
          range.allocateNext();
          range.allocateNext(); // the same address twice shows here
        } catch (e) {
          // a strategy may find nothing it would choose on an empty range (the run counts that as full)
          if (!(e instanceof ErrFull)) {
            throw new UsageError(`--strategy ${path}: '${name}' fails a trial of two allocateNext calls on ${cidr}: ${firstLine(e)}`);
          }
        } finally {
          range.destroy();
        }
      }
      out.push({ name, module: path, spec: { label: name, strategy } });
    }
  }
  return out;
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
}
