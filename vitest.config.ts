import { defineConfig } from 'vitest/config';
import { runGuard } from './test/suite/run-guard.js';

/** Migrates one embedded database per run for the projects that open one (test/helpers/database.ts). */
const database = ['test/helpers/global-setup.ts'];

// Two cores on CI: keep parallelism modest so PGlite/PostgreSQL tests do not starve each other.
export default defineConfig({
  // A file whose worker died, or that never ran, fails the run by name (test/suite/run-guard.ts).
  plugins: [runGuard()],
  test: {
    pool: 'forks',
    maxWorkers: 2,
    // A runaway worker dies at its heap bound, or past 2 GiB resident (test/suite/worker-memory.ts),
    // and the run names its file, instead of swapping the machine. Each run ends with the largest
    // workers' peak memory.
    execArgv: ['--max-old-space-size=1536'],
    setupFiles: ['test/suite/worker-memory.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        // Pure functions only: no database, no global setup.
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'] },
      },
      {
        extends: true,
        // A worker per file: reused workers kept each file's embedded database's memory and grew
        // past the 2 GiB bound over a run.
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: database,
        },
      },
      {
        extends: true,
        // helm lint/template of charts/ with a real helm binary (test/charts/helm.ts).
        test: { name: 'charts', include: ['test/charts/**/*.test.ts'], globalSetup: database },
      },
      {
        extends: true,
        // The reporter (and later the operator) against the Kubernetes API server double over real HTTP.
        test: { name: 'k8s', include: ['test/k8s/**/*.test.ts'], globalSetup: database },
      },
      // Private PostgreSQL clusters crashed, failed over and cut off (test/faults/): only on the
      // PostgreSQL run (TEST_DATABASE_URL set), so the PGlite run does not repeat them.
      ...(process.env.TEST_DATABASE_URL
        ? [
            {
              extends: true as const,
              test: { name: 'faults', include: ['test/faults/**/*.test.ts'], testTimeout: 120_000 },
            },
          ]
        : []),
      // The console in Debian's Chromium against one seeded server (test/console/global-setup.ts);
      // on the embedded database only, so the PostgreSQL run does not pay for it twice.
      ...(process.env.TEST_DATABASE_URL
        ? []
        : [
            {
              extends: true as const,
              test: {
                name: 'console',
                include: ['test/console/**/*.test.ts'],
                globalSetup: [...database, 'test/console/global-setup.ts'],
                // a page waits up to 20 s for what it shows (test/console/pages.ts): a loaded machine is slow
                testTimeout: 60_000,
              },
            },
          ]),
    ],
  },
});
