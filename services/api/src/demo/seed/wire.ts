/**
 * The wire, as the kosli CLI speaks it: every request the demo sends goes through `app.inject`
 * with the CLI's headers and bodies, while the seeding's clock stands where the story is.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

export const DAY = 86_400_000;
export const HOUR = 3_600_000;
export const MINUTE = 60_000;

export const sha = (...parts: Array<string | number>): string =>
  createHash('sha256').update(parts.join(':')).digest('hex');
export const seconds = (ms: number): number => Math.floor(ms / 1000);

export type FormPart = { name: string; value: string } | { name: string; filename: string; content: string };

/** A multipart form as Go's mime/multipart writes it for the kosli CLI. */
function goMultipart(parts: FormPart[]) {
  const boundary = sha('boundary', Math.random()).slice(0, 60);
  const chunks: string[] = [];
  for (const p of parts) {
    chunks.push(`--${boundary}\r\n`);
    if ('value' in p) {
      chunks.push(`Content-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`);
    } else {
      chunks.push(
        `Content-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\n` +
          `Content-Type: application/octet-stream\r\n\r\n${p.content}\r\n`,
      );
    }
  }
  chunks.push(`--${boundary}--\r\n`);
  return { body: Buffer.from(chunks.join('')), contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface SeedCounts {
  trails: number;
  artifacts: number;
  attestations: number;
}

/** What every part of the seeding sends with: the organization, the clock, and the requests. */
export interface Wire {
  org: string;
  counts: SeedCounts;
  /** Puts the server's clock at `ms`. */
  at: (ms: number) => void;
  form: (method: 'PUT' | 'POST', url: string, parts: FormPart[]) => Promise<unknown>;
  json: (method: 'PUT' | 'POST' | 'PATCH', url: string, payload?: unknown) => Promise<unknown>;
  /** Reports an attestation of `kind` to a trail, as `kosli attest <kind>` does. */
  attest: (
    flow: string,
    trail: string,
    kind: string,
    data: Record<string, unknown>,
    file?: { filename: string; content: string },
  ) => Promise<unknown>;
}

export function createWire(options: {
  app: FastifyInstance;
  apiKey: string;
  org: string;
  at: (ms: number) => void;
}): Wire {
  const { app, apiKey, org, at } = options;
  const counts: SeedCounts = { trails: 0, artifacts: 0, attestations: 0 };
  const send = async (
    method: 'GET' | 'PUT' | 'POST' | 'PATCH',
    url: string,
    body?: Buffer | string,
    contentType?: string,
  ) => {
    const res = await app.inject({
      method,
      url: `/api/v2${url}`,
      headers: {
        authorization: `Bearer ${apiKey}`,
        'user-agent': 'Kosli/v2.38.0',
        'content-type': contentType ?? 'application/json; charset=utf-8',
      },
      ...(body !== undefined ? { payload: body } : {}),
    });
    if (res.statusCode !== 200 && res.statusCode !== 201) {
      throw new Error(`demo seeding: ${method} /api/v2${url} answered ${res.statusCode}: ${res.body}`);
    }
    return res.json<unknown>();
  };
  const json: Wire['json'] = (method, url, payload = null) => send(method, url, JSON.stringify(payload));
  const form: Wire['form'] = (method, url, parts) => {
    const { body, contentType } = goMultipart(parts);
    return send(method, url, body, contentType);
  };
  const attest: Wire['attest'] = (flow, trail, kind, data, file) => {
    counts.attestations += 1;
    return form('POST', `/attestations/${org}/${flow}/trail/${trail}/${kind}`, [
      { name: 'data_json', value: JSON.stringify({ user_data: {}, ...data }) },
      ...(file ? [{ name: 'attachment_file', ...file }] : []),
    ]);
  };
  return { org, counts, at, form, json, attest };
}
