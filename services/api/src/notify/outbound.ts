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
import { refusedAddress, type OutboundAllowList } from '../domain/outbound-address.js';

/** A delivery that must not be attempted again as it is (bad URL, refused address). */
export class RefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedError';
  }
}

/** POSTs a JSON body; resolves on 2xx, rejects with the reason otherwise. */
export async function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  allow: OutboundAllowList,
  timeoutMs: number,
): Promise<void> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new RefusedError(`'${url}' is not a URL`);
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new RefusedError(`${target.protocol} is not http(s)`);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host)
    ? [{ address: host, family: isIP(host) }]
    : await lookup(host, { all: true, verbatim: true });
  if (addresses.length === 0) throw new Error(`${host} does not resolve`);
  for (const a of addresses) {
    const reason = refusedAddress(a.address, host, allow);
    if (reason) throw new RefusedError(`refused: ${reason}`);
  }
  const pinned = addresses[0]!;
  const pin: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [
        pinned,
      ]);
    } else callback(null, pinned.address, pinned.family);
  };
  const client = target.protocol === 'https:' ? https : http;
  await new Promise<void>((resolve, reject) => {
    const req = client.request(
      target,
      {
        method: 'POST',
        lookup: pin,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'Verity-Notifier/1',
          ...headers,
        },
        timeout: timeoutMs,
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve();
          else reject(new Error(`HTTP ${status} from ${target.host}`));
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${target.host} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}
