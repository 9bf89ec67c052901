/**
 * Outbound GET of a small document (an OIDC issuer's configuration and keys) through the same
 * guard as deliveries (outbound.ts): the host resolved and every address checked, the connection
 * pinned to a checked address, one deadline for the whole exchange, and the body bounded.
 */
import http from 'node:http';
import https from 'node:https';
import type { OutboundAllowList } from '../domain/outbound-address.js';
import { checkedAddress, httpTarget, pinnedLookup, type Address } from './outbound.js';

/** What a GET answered: the status and the body, complete. */
export interface FetchedDocument {
  status: number;
  body: Buffer;
}

/** Limits of one GET. */
export interface FetchLimits {
  timeoutMs: number;
  maxBytes: number;
}

function get(
  target: URL,
  pinned: Address,
  limits: { remaining: number; maxBytes: number; late: () => Error },
): Promise<FetchedDocument> {
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<FetchedDocument>((resolve, reject) => {
    const req = client.request(
      target,
      {
        method: 'GET',
        lookup: pinnedLookup(pinned),
        // One connection per fetch: a pinned address must not be reused for another host.
        agent: false,
        headers: { accept: 'application/json', 'user-agent': 'Verity/1' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > limits.maxBytes) {
            req.destroy(new Error(`${target.host} answered more than ${limits.maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          clearTimeout(deadline);
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) });
        });
        res.on('error', (err) => {
          clearTimeout(deadline);
          reject(err);
        });
      },
    );
    // The deadline covers the whole exchange, body included: the socket goes with it.
    const deadline = setTimeout(() => req.destroy(limits.late()), limits.remaining);
    req.on('error', (err) => {
      clearTimeout(deadline);
      reject(err);
    });
    req.end();
  });
}

/**
 * GETs `url`; rejects with RefusedError for a refused address or a non-http(s) URL, and with an
 * error when the whole exchange takes longer than `timeoutMs` or the body exceeds `maxBytes`.
 */
export async function fetchDocument(
  url: string,
  allow: OutboundAllowList,
  limits: FetchLimits,
): Promise<FetchedDocument> {
  const started = Date.now();
  const target = httpTarget(url);
  const late = () => new Error(`no answer from ${target.host} within ${limits.timeoutMs} ms`);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const pinned = await checkedAddress(host, allow, limits.timeoutMs, late);
  const remaining = limits.timeoutMs - (Date.now() - started);
  if (remaining <= 0) {
    throw late();
  }
  return get(target, pinned, { remaining, maxBytes: limits.maxBytes, late });
}
