/**
 * Outbound HTTP for webhook and Slack targets: the host is resolved, every address checked
 * (domain/outbound-address.ts), and the connection pinned to a checked address so a second DNS
 * answer cannot point it elsewhere.
 */
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import tls from 'node:tls';
import { refusedAddress, type OutboundAllowList } from '../domain/outbound-address.js';

/** A delivery that must not be attempted again as it is (bad URL, refused address). */
export class RefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedError';
  }
}

/** Response bytes read (and thrown away) at most; the answer is the status. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

/** Rejects with `late()` when `promise` has not settled within `ms`. */
export async function withDeadline<T>(promise: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(late()), Math.max(0, ms));
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The URL as a target; RefusedError unless it is an http(s) URL. */
export function httpTarget(url: string): URL {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new RefusedError('not a URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new RefusedError(`${target.protocol} is not http(s)`);
  }
  return target;
}

export type Address = { address: string; family: number };

/** The address to connect to; RefusedError when any address the host resolves to is refused. */
export async function checkedAddress(
  host: string,
  allow: OutboundAllowList,
  timeoutMs: number,
  late: () => Error,
): Promise<Address> {
  const addresses = isIP(host)
    ? [{ address: host, family: isIP(host) }]
    : await withDeadline(lookup(host, { all: true, verbatim: true }), timeoutMs, late);
  if (addresses.length === 0) {
    throw new Error(`${host} does not resolve`);
  }
  for (const a of addresses) {
    const reason = refusedAddress(a.address, host, allow);
    if (reason) {
      throw new RefusedError(`refused: ${reason}`);
    }
  }
  return addresses[0]!;
}

/** A lookup that answers every name with the one checked address. */
export function pinnedLookup(pinned: Address): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (e: null, a: Address[]) => void)(null, [pinned]);
    } else {
      callback(null, pinned.address, pinned.family);
    }
  };
}

/** Authorities https deliveries trust: the system's, and the operator's own (`VERITY_OUTBOUND_CA`). */
function trusted(extraCa: string | undefined): { ca?: string[] } {
  return extraCa ? { ca: [...tls.rootCertificates, extraCa] } : {};
}

/** One POST over a connection pinned to `pinned`, settled by the status within `remaining` ms. */
function post(
  target: URL,
  pinned: Address,
  body: string,
  headers: Record<string, string>,
  limits: { remaining: number; maxResponseBytes: number; late: () => Error; ca?: string },
): Promise<void> {
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) {
        return;
      }
      settled = true;
      if (err) {
        reject(err);
      } else {
        resolve();
      }
    };
    const req = client.request(
      target,
      {
        method: 'POST',
        lookup: pinnedLookup(pinned),
        // One connection per delivery: a pinned address must not be reused for another host.
        agent: false,
        ...(target.protocol === 'https:' ? trusted(limits.ca) : {}),
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'Verity-Notifier/1',
          ...headers,
        },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          settle();
        } else {
          settle(new Error(`HTTP ${status} from ${target.host}`));
        }
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > limits.maxResponseBytes) {
            req.destroy();
          }
        });
        res.on('error', () => undefined);
        res.on('close', () => clearTimeout(deadline));
      },
    );
    // The deadline covers the rest of the exchange, body included: the socket goes with it.
    const deadline = setTimeout(() => req.destroy(limits.late()), limits.remaining);
    req.on('error', (err) => {
      clearTimeout(deadline);
      settle(err);
    });
    req.on('close', () => {
      if (settled) {
        return;
      }
      clearTimeout(deadline);
      settle(new Error(`${target.host} closed the connection without an answer`));
    });
    req.end(body);
  });
}

/**
 * POSTs a JSON body; resolves on 2xx, rejects with the reason otherwise. The whole call (name
 * lookup, connect, send, response head) has one deadline of `timeoutMs`; the status decides, and
 * at most `maxResponseBytes` of the body are read before the connection is closed, so a
 * receiver that trickles or never ends its answer holds nothing beyond the deadline.
 */
export async function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  allow: OutboundAllowList,
  timeoutMs: number,
  maxResponseBytes = MAX_RESPONSE_BYTES,
  ca?: string,
): Promise<void> {
  const started = Date.now();
  const target = httpTarget(url);
  const late = () => new Error(`no answer from ${target.host} within ${timeoutMs} ms`);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const pinned = await checkedAddress(host, allow, timeoutMs, late);
  const remaining = timeoutMs - (Date.now() - started);
  if (remaining <= 0) {
    throw late();
  }
  await post(target, pinned, body, headers, { remaining, maxResponseBytes, late, ca });
}
