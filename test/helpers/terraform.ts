/**
 * Requests exactly as the Kosli Terraform provider's client (`kosli-dev/terraform-provider-kosli`,
 * `pkg/client`) sends them: Bearer key and its User-Agent on every request; JSON with
 * `Content-Type: application/json` only when there is a body (an archive is a PUT with no body and
 * no Content-Type); multipart from Go's mime/multipart for flows and custom attestation types.
 * Paths are relative to `/api/v2`, as the provider appends them to `api_url` + `/api/v2`.
 */
import type { FastifyInstance } from 'fastify';
import type { Reply } from './app.js';
import { goMultipart, type Part } from './multipart.js';

export const TERRAFORM_USER_AGENT = 'terraform-provider-kosli/0.6.4';

/** A client speaking like the Terraform provider. */
export function terraformClient(app: FastifyInstance, key: string) {
  const send = async (
    method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE',
    path: string,
    body?: { payload: Buffer | string; contentType: string },
  ): Promise<Reply> => {
    const res = await app.inject({
      method,
      url: `/api/v2${path}`,
      headers: {
        authorization: `Bearer ${key}`,
        'user-agent': TERRAFORM_USER_AGENT,
        'accept-encoding': 'gzip',
        ...(body ? { 'content-type': body.contentType } : {}),
      },
      ...(body ? { payload: body.payload } : {}),
    });
    let json: unknown;
    try {
      json = res.body === '' ? undefined : JSON.parse(res.body);
    } catch {
      json = undefined;
    }
    return { status: res.statusCode, headers: res.headers, body: res.body, json };
  };
  /** `doRequest`: a nil body sends nothing; any other is marshalled as JSON. */
  const json = (method: 'PUT' | 'POST' | 'PATCH', path: string, payload?: unknown) =>
    send(
      method,
      path,
      payload === undefined
        ? undefined
        : { payload: JSON.stringify(payload), contentType: 'application/json' },
    );
  return {
    get: (path: string) => send('GET', path),
    put: (path: string, payload?: unknown) => json('PUT', path, payload),
    post: (path: string, payload?: unknown) => json('POST', path, payload),
    patch: (path: string, payload?: unknown) => json('PATCH', path, payload),
    delete: (path: string) => send('DELETE', path),
    multipart: (method: 'PUT' | 'POST', path: string, parts: Part[]) => {
      const { body, contentType } = goMultipart(parts);
      return send(method, path, { payload: body, contentType });
    },
  };
}
