/**
 * The signing keys of OIDC issuers, per process: the issuer's discovery document names its
 * `jwks_uri`, both fetched through the outbound address guard with one deadline and a size bound
 * each. Keys are kept for `MAX_AGE_MS`; a token whose key id they lack fetches them again, but
 * never more than once per `REFRESH_FLOOR_MS` per issuer, so tokens with made-up key ids cannot
 * make Verity hammer an issuer. A failed fetch is remembered for the floor too; keys held before
 * it serve on while the issuer is away, for a day at most. Issuers the operator lists in
 * VERITY_OIDC_INSECURE_ISSUERS are exempt from the guard (their own host only).
 */
import { createLocalJWKSet, type JWK, type JWTVerifyGetKey } from 'jose';
import type { FastifyBaseLogger } from 'fastify';
import { discoveryUrl } from '../domain/oidc-trust.js';
import type { OutboundAllowList } from '../domain/outbound-address.js';
import { UnauthorizedError } from '../errors.js';
import { LruMap } from '../lru-map.js';
import { RefusedError } from '../notify/outbound.js';
import { fetchDocument } from '../notify/outbound-fetch.js';
import type { IssuerKeySource } from '../usecases/access/oidc-federation.js';

/** How long fetched keys are used before they are fetched again. */
export const MAX_AGE_MS = 10 * 60_000;
/** Keys older than this are not used even while the issuer cannot be reached. */
export const MAX_STALE_MS = 24 * 3600_000;
/** The least time between two fetches of one issuer's keys, whatever the tokens ask. */
export const REFRESH_FLOOR_MS = 60_000;
/** Largest discovery document or key set read. */
export const MAX_DOCUMENT_BYTES = 128 * 1024;
/** Keys of one issuer kept at most (issuers publish two or three). */
const MAX_KEYS = 64;
/** Issuers whose keys one process keeps. */
const MAX_ISSUERS = 256;
/** Key types that verify asymmetric signatures; a symmetric `oct` key is never used. */
const ASYMMETRIC_KTY = new Set(['RSA', 'EC', 'OKP']);

interface Entry {
  keys?: JWTVerifyGetKey;
  fetchedAt: number;
  attemptedAt: number;
  failure?: string;
  inflight?: Promise<JWTVerifyGetKey>;
}

export interface IssuerKeysOptions {
  allow: OutboundAllowList;
  insecureIssuers: readonly string[];
  timeoutMs: number;
  clock: () => Date;
  log: FastifyBaseLogger;
}

/** Why a fetch failed, as a caller may read it: no address, no internal detail. */
class FetchFailure extends Error {}

/** The keys of OIDC issuers, fetched through the outbound guard and cached (see the file comment). */
export class IssuerKeys implements IssuerKeySource {
  private readonly entries = new LruMap<Entry>(MAX_ISSUERS);
  constructor(private readonly options: IssuerKeysOptions) {}

  cached(issuer: string): JWTVerifyGetKey | undefined {
    return this.usable(this.entries.get(issuer));
  }

  /** The entry's keys unless they are older than MAX_STALE_MS. */
  private usable(entry: Entry | undefined): JWTVerifyGetKey | undefined {
    return entry?.keys && this.options.clock().getTime() - entry.fetchedAt < MAX_STALE_MS
      ? entry.keys
      : undefined;
  }

  async keys(issuer: string): Promise<JWTVerifyGetKey> {
    const entry = this.entries.get(issuer);
    const now = this.options.clock().getTime();
    if (entry?.keys && now - entry.fetchedAt < MAX_AGE_MS) {
      return entry.keys;
    }
    if (entry && !entry.inflight && now - entry.attemptedAt < REFRESH_FLOOR_MS) {
      const held = this.usable(entry);
      if (held) {
        return held;
      }
      throw this.unavailable(issuer, entry.failure);
    }
    return this.fetch(issuer);
  }

  async refresh(issuer: string): Promise<JWTVerifyGetKey | null> {
    const entry = this.entries.get(issuer);
    if (entry?.inflight) {
      return entry.inflight;
    }
    if (entry && this.options.clock().getTime() - entry.attemptedAt < REFRESH_FLOOR_MS) {
      return null;
    }
    return this.fetch(issuer);
  }

  private unavailable(issuer: string, failure: string | undefined): UnauthorizedError {
    return new UnauthorizedError(
      `Keys of OIDC issuer '${issuer.slice(0, 128)}' could not be fetched: ${failure ?? 'unknown failure'}`,
    );
  }

  /** One fetch per issuer at a time; concurrent callers share it. */
  private fetch(issuer: string): Promise<JWTVerifyGetKey> {
    const previous = this.entries.get(issuer);
    if (previous?.inflight) {
      return previous.inflight;
    }
    const entry: Entry = {
      keys: previous?.keys,
      fetchedAt: previous?.fetchedAt ?? 0,
      attemptedAt: this.options.clock().getTime(),
    };
    entry.inflight = this.load(issuer)
      .then((keys) => {
        entry.keys = keys;
        entry.fetchedAt = this.options.clock().getTime();
        entry.failure = undefined;
        return keys;
      })
      .catch((err: unknown) => {
        entry.failure = err instanceof FetchFailure ? err.message : 'the issuer could not be reached';
        this.options.log.warn({ err, issuer }, 'could not fetch the keys of an OIDC issuer');
        const held = this.usable(entry);
        if (held) {
          return held;
        }
        throw this.unavailable(issuer, entry.failure);
      })
      .finally(() => {
        entry.inflight = undefined;
      });
    this.entries.set(issuer, entry);
    return entry.inflight;
  }

  /** The guard's allow list for `url`: the listed insecure issuer's own host is exempt. */
  private allowFor(issuer: string, url: string): OutboundAllowList {
    const { allow, insecureIssuers } = this.options;
    const target = new URL(url);
    if (insecureIssuers.includes(issuer) && target.host === new URL(issuer).host) {
      return {
        hosts: [...allow.hosts, target.hostname.replace(/^\[|\]$/g, '').toLowerCase()],
        cidrs: allow.cidrs,
      };
    }
    return allow;
  }

  /** A JSON object fetched from `url`; FetchFailure with a reason a caller may read. */
  private async getJson(issuer: string, url: string, what: string): Promise<Record<string, unknown>> {
    let fetched;
    try {
      fetched = await fetchDocument(url, this.allowFor(issuer, url), {
        timeoutMs: this.options.timeoutMs,
        maxBytes: MAX_DOCUMENT_BYTES,
      });
    } catch (err) {
      if (err instanceof RefusedError) {
        throw new FetchFailure(
          `its ${what} address is not allowed for outbound calls (VERITY_OUTBOUND_ALLOW)`,
          {
            cause: err,
          },
        );
      }
      throw new FetchFailure(`its ${what} could not be read`, { cause: err });
    }
    if (fetched.status !== 200) {
      throw new FetchFailure(`its ${what} answered HTTP ${fetched.status}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(fetched.body.toString('utf8'));
    } catch {
      throw new FetchFailure(`its ${what} is not JSON`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new FetchFailure(`its ${what} is not a JSON object`);
    }
    return parsed as Record<string, unknown>;
  }

  private async load(issuer: string): Promise<JWTVerifyGetKey> {
    const config = await this.getJson(issuer, discoveryUrl(issuer), 'discovery document');
    if (config.issuer !== issuer) {
      throw new FetchFailure('its discovery document names another issuer');
    }
    const jwksUri = typeof config.jwks_uri === 'string' ? config.jwks_uri : '';
    const https = URL.canParse(jwksUri) && new URL(jwksUri).protocol === 'https:';
    const listedHttp =
      this.options.insecureIssuers.includes(issuer) &&
      URL.canParse(jwksUri) &&
      new URL(jwksUri).protocol === 'http:';
    if (!https && !listedHttp) {
      throw new FetchFailure('its discovery document has no https jwks_uri');
    }
    const set = await this.getJson(issuer, jwksUri, 'key set');
    if (!Array.isArray(set.keys)) {
      throw new FetchFailure('its key set has no keys');
    }
    const keys = (set.keys as unknown[])
      .filter(
        (k): k is JWK =>
          typeof k === 'object' &&
          k !== null &&
          ASYMMETRIC_KTY.has((k as JWK).kty ?? '') &&
          (k as JWK).use !== 'enc',
      )
      .slice(0, MAX_KEYS);
    return createLocalJWKSet({ keys });
  }
}
