/**
 * VERITY_TRUST_PROXY: which proxies in front of the API may say who the client is
 * (`X-Forwarded-For`, `-Proto`, `-Host`). The client address keys the failed-authentication
 * limit, so trusting every hop would let a caller mint a new address with each request: only a
 * hop count or a list of the proxies' own addresses is ever trusted.
 */
import { isIP } from 'node:net';
import type { Reading } from '../../shared/config.js';

export type TrustProxy =
  | { kind: 'none' }
  /** The last `hops` proxies; `fromTrue`: written as the legacy `true`, taken as one hop. */
  | { kind: 'hops'; hops: number; fromTrue: boolean }
  /** Proxies at these addresses, CIDR ranges or proxy-addr names (loopback, linklocal, uniquelocal). */
  | { kind: 'addresses'; addresses: string[] };

/** The most proxies a request can plausibly pass through. */
export const MAX_TRUSTED_HOPS = 16;

const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

function isAddressOrRange(entry: string): boolean {
  if (NAMED_RANGES.includes(entry)) {
    return true;
  }
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) {
    return false;
  }
  if (prefix === undefined) {
    return true;
  }
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * `false` (or unset), a hop count, or a comma-separated list of proxy addresses and ranges.
 * `true` is read as one hop, never as "every hop".
 */
export function readTrustProxy(raw: string | undefined): Reading<TrustProxy> {
  const s = (raw ?? '').trim();
  if (s === '' || /^(false|no|off|0)$/i.test(s)) {
    return { ok: true, value: { kind: 'none' } };
  }
  if (/^(true|yes|on)$/i.test(s)) {
    return { ok: true, value: { kind: 'hops', hops: 1, fromTrue: true } };
  }
  if (/^\d+$/.test(s)) {
    const hops = Number(s);
    return hops <= MAX_TRUSTED_HOPS
      ? { ok: true, value: { kind: 'hops', hops, fromTrue: false } }
      : { ok: false, problem: `a hop count must be between 1 and ${MAX_TRUSTED_HOPS}, got '${raw}'` };
  }
  const entries = s.split(',').map((e) => e.trim());
  const bad = entries.filter((e) => !isAddressOrRange(e));
  if (bad.length > 0) {
    return {
      ok: false,
      problem: `must be false, a hop count, or a comma-separated list of proxy addresses or CIDR ranges; not an address or range: ${bad.map((b) => `'${b}'`).join(', ')}`,
    };
  }
  return { ok: true, value: { kind: 'addresses', addresses: entries } };
}

/**
 * The value of fastify's `trustProxy` option. A hop count is a function of the hop's index (0:
 * the connection's peer), as fastify itself reads a bare number as "trust nothing".
 */
export function fastifyTrustProxy(
  trust: TrustProxy,
): false | string[] | ((address: string, hop: number) => boolean) {
  switch (trust.kind) {
    case 'none':
      return false;
    case 'hops': {
      const hops = trust.hops;
      return (_address, hop) => hop < hops;
    }
    case 'addresses':
      return trust.addresses;
  }
}

/** How the setting is described in the start-up log. */
export function describeTrustProxy(trust: TrustProxy): string {
  switch (trust.kind) {
    case 'none':
      return 'no proxy trusted: the client address is the connection';
    case 'hops':
      return trust.fromTrue
        ? "VERITY_TRUST_PROXY=true is taken as 1 hop (the last proxy's X-Forwarded-For entry), not every hop; set a hop count or the proxies' addresses"
        : `the last ${trust.hops} proxy hop(s) trusted`;
    case 'addresses':
      return `proxies at ${trust.addresses.join(', ')} trusted`;
  }
}
