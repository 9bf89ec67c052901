/**
 * Requests exactly as the kosli CLI (v2.38.0) sends them (reference/cli-requests.md section 1):
 * Bearer key, `User-Agent: Kosli/v2.38.0`, `Content-Type: application/json; charset=utf-8` on every
 * request including GETs, compact JSON or the literal `null` on writes, Go-style multipart.
 */
import type { FastifyInstance } from 'fastify';
import { goMultipart, type Part } from './multipart.js';
import type { Reply } from './app.js';

export const CLI_USER_AGENT = 'Kosli/v2.38.0';

/** A client speaking like the CLI. */
export function cliClient(app: FastifyInstance, key: string) {
  const send = async (
    method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    body?: Buffer | string,
    contentType?: string,
  ): Promise<Reply> => {
    const res = await app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${key}`,
        'user-agent': CLI_USER_AGENT,
        'content-type': contentType ?? 'application/json; charset=utf-8',
        'accept-encoding': 'gzip',
      },
      ...(body !== undefined ? { payload: body } : {}),
    });
    let json: unknown;
    try {
      json = res.body === '' ? undefined : JSON.parse(res.body);
    } catch {
      json = undefined;
    }
    return {
      status: res.statusCode,
      headers: res.headers,
      body: res.body,
      json,
      raw: res.rawPayload,
    } as Reply & { raw: Buffer };
  };
  return {
    get: (url: string) => send('GET', url),
    /** A JSON write: the payload marshalled compactly, `null` when there is none. */
    json: (method: 'PUT' | 'POST' | 'PATCH' | 'DELETE', url: string, payload: unknown = null) =>
      send(method, url, JSON.stringify(payload)),
    multipart: (method: 'PUT' | 'POST', url: string, parts: Part[]) => {
      const { body, contentType } = goMultipart(parts);
      return send(method, url, body, contentType);
    },
  };
}
