/**
 * The plan of the demo's history: builds of two services, promoted through dev, staging and
 * prod, with a few stories the console should tell (failing tests, an overridden scan, a review
 * still missing, SBOMs).
 */
import { DAY, HOUR, sha } from './wire.js';

export interface Service {
  flow: string;
  templateName: string;
  image: string;
  namespace: string;
  repo: string;
}

export const PAYMENTS: Service = {
  flow: 'payments',
  templateName: 'payments-api',
  image: 'ghcr.io/acme/payments-api',
  namespace: 'payments',
  repo: 'acme/payments',
};
export const FRONTEND: Service = {
  flow: 'frontend',
  templateName: 'web',
  image: 'ghcr.io/acme/web',
  namespace: 'web',
  repo: 'acme/web',
};

export const REDIS = { image: 'docker.io/library/redis:7.2.4', fingerprint: sha('redis:7.2.4') };
export const PEOPLE = ['ada', 'grace', 'linus', 'margaret', 'ken', 'barbara'];

export interface Build {
  service: Service;
  number: number;
  version: string;
  at: number;
  fingerprint: string;
  commit: string;
  /** Unit tests fail: the trail is non-compliant. */
  failingTests?: boolean;
  /** The dependency scan finds a medium issue, overridden as accepted. */
  overriddenScan?: boolean;
  /** The generic security review was never reported: the trail is incomplete. */
  noReview?: boolean;
  /** A CycloneDX SBOM is attested to the artifact: the exposure page finds its components. */
  sbom?: boolean;
  promote: { staging: boolean; prod: boolean };
}

/** The builds between `start` and `end`, oldest first per service, with their stories marked. */
export function planBuilds(start: number, end: number): Build[] {
  const builds: Build[] = [];
  const plan = (service: Service, everyDays: number, offsetHours: number, major: string) => {
    let n = 0;
    for (let t = start + offsetHours * HOUR; t < end - 6 * HOUR; t += everyDays * DAY) {
      n += 1;
      const fresh = t > end - 2 * DAY;
      builds.push({
        service,
        number: n,
        version: `${major}.${n}`,
        at: t,
        fingerprint: sha(service.image, n),
        commit: sha('commit', service.repo, n).slice(0, 40),
        promote: { staging: t < end - 20 * HOUR, prod: !fresh && n % 2 === 1 },
      });
    }
  };
  plan(PAYMENTS, 2, 1, '1.4');
  plan(FRONTEND, 3, 4, '2.8');
  markStories(builds);
  return builds;
}

/** A few stories the console should tell. */
function markStories(builds: Build[]): void {
  const payments = builds.filter((b) => b.service === PAYMENTS);
  const frontend = builds.filter((b) => b.service === FRONTEND);
  // failing unit tests reach staging (non-compliant there) and are never promoted to prod
  const failing = payments[Math.min(payments.length - 2, Math.max(1, Math.floor(payments.length / 3)))]!;
  failing.failingTests = true;
  failing.promote.prod = false;
  // a dependency finding accepted by security: the scan is overridden
  const overridden = payments[Math.min(payments.length - 1, 2)]!;
  if (overridden !== failing) {
    overridden.overriddenScan = true;
  }
  // the newest frontend build waits for its security review: staging is non-compliant now
  const awaiting = frontend[frontend.length - 1]!;
  awaiting.noReview = true;
  awaiting.promote = { staging: true, prod: false };
  // two payments builds carry an SBOM: the overridden one, and the one still running in prod
  overridden.sbom = true;
  const inProd = payments.filter((b) => b.promote.prod);
  if (inProd.length > 0) {
    inProd[inProd.length - 1]!.sbom = true;
  }
}
