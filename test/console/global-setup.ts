/**
 * Once per run of the console project: the built console, and the API serving it on the embedded
 * in-memory database seeded with a week of the demo organization. Test files reach it through
 * `inject('console')`. Without Chromium the run fails in CI and is skipped, loudly, elsewhere.
 */
import { readFileSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { chromiumMissing } from './browser.js';
import { oidcEnv, startOidcProvider } from '../helpers/oidc-provider.js';
import { ensureConsoleBuilt, freePort, startConsoleServer } from './harness.js';

/** The demo organization, and the people of the test identity provider who may sign in to it. */
const DEMO_ORG = 'acme';
const CONSOLE_PEOPLE = {
  alice: { name: 'Alice Platform', email: 'alice@example.com', groups: ['platform'] },
  ola: { name: 'Ola Outsider', email: 'ola@example.com', groups: ['marketing'] },
};

export interface ConsoleTarget {
  baseUrl: string;
  org: string;
  apiKey: string;
  /** An organization with nothing in it, for the empty states. */
  empty: { org: string; apiKey: string };
  /** The identity provider the console signs people in with (oidc-provider, on its own port). */
  idp: { issuer: string };
  /** Set when the tests cannot run here (never in CI, where that is a failure). */
  skip?: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    console: ConsoleTarget;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const missing = chromiumMissing();
  if (missing) {
    if (process.env.CI) {
      throw new Error(missing);
    }
    process.stderr.write(`\n  SKIPPING the console end-to-end tests: ${missing}\n\n`);
    project.provide('console', {
      baseUrl: '',
      org: '',
      apiKey: '',
      empty: { org: '', apiKey: '' },
      idp: { issuer: '' },
      skip: missing,
    });
    return undefined;
  }
  ensureConsoleBuilt();
  // the migrated database test/helpers/global-setup.ts dumped, when it ran before this one
  const dump = project.getProvidedContext().pgliteTemplate;
  const port = await freePort();
  const idp = await startOidcProvider({
    redirectUris: [`http://127.0.0.1:${port}/auth/oidc/callback`],
    people: CONSOLE_PEOPLE,
  });
  const server = await startConsoleServer({
    days: 6,
    port,
    env: oidcEnv(idp, { platform: { [DEMO_ORG]: 'admin' } }),
    ...(dump ? { template: new Blob([readFileSync(dump)]) } : {}),
  }).catch(async (err: unknown) => {
    await idp.close();
    throw err;
  });
  project.provide('console', {
    baseUrl: server.baseUrl,
    org: server.demo.org,
    apiKey: server.demo.apiKey,
    empty: server.empty,
    idp: { issuer: idp.issuer },
  });
  return async () => {
    // Closing PGlite ends its Emscripten runtime, which sets process.exitCode (to 0): without
    // this, a run with failed tests elsewhere would exit 0 and CI would pass it.
    const exitCode = process.exitCode;
    await server.close();
    await idp.close();
    process.exitCode = exitCode;
  };
}
