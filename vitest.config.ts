import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Vitest's default, one worker fewer than the cores, runs one file at a time on a 2-core
    // machine (CI's): the files are independent, so every core runs one.
    maxWorkers: availableParallelism(),
    // A liveness bound, not a speed check: the heaviest tests (a million-address load under a
    // memory cap, a CA handed to child processes) take 15–45 s on an idle 2-core machine and
    // over 60 s when it is busy. CI's per-step limits bound the whole run.
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
