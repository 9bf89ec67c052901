/**
 * Evidence files download whatever their name: any script, control characters, quotes. The
 * Content-Disposition carries a printable-ASCII `filename` and the real name in `filename*`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
let readerKey: string;

/** The parameters of a Content-Disposition, `filename*` decoded as RFC 8187 says. */
function disposition(header: string): { type: string; filename?: string; filenameStar?: string } {
  const [type, ...params] = header.split(/;\s*/);
  const out: { type: string; filename?: string; filenameStar?: string } = { type: type! };
  for (const p of params) {
    const plain = /^filename="((?:[^"\\]|\\.)*)"$/.exec(p);
    const star = /^filename\*=UTF-8''([A-Za-z0-9!#$&+\-.^_`|~%]*)$/.exec(p);
    if (plain) {
      out.filename = plain[1];
    } else if (star) {
      out.filenameStar = decodeURIComponent(star[1]!);
    } else {
      throw new Error(`unexpected parameter ${p}`);
    }
  }
  return out;
}

/** Attaches `content` as `filename` to a new attestation and downloads it as a reader. */
async function roundTrip(name: string, filename: string, content: Buffer) {
  const r = await cli.multipart('POST', '/api/v2/attestations/acme/f1/trail/t1/generic', [
    { name: 'data_json', value: JSON.stringify({ attestation_name: name, is_compliant: true }) },
    { name: 'attachment_file', filename, content },
  ]);
  expect(r.status, r.body).toBe(201);
  const [att] = (await cli.get(`/api/v2/attestations/acme/f1/trail/t1/${name}`)).json;
  expect(att.evidence_file.filename).toBe(filename);
  return t.app.inject({
    url: new URL(att.evidence_file.download_url).pathname,
    headers: { authorization: `Bearer ${readerKey}` },
  });
}

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey('acme', 'admin'));
  readerKey = await t.seedKey('acme', 'reader');
  expect((await cli.json('PUT', '/api/v2/flows/acme', { name: 'f1', description: '' })).status).toBe(201);
  expect((await cli.json('PUT', '/api/v2/trails/acme/f1', { name: 't1' })).status).toBe(201);
});
afterAll(async () => t?.close());

describe('evidence file names', () => {
  it.each([
    ['euro', 'r€port.txt', 'r_port.txt'],
    ['cjk', '報告.txt', '__.txt'],
    ['control', 'a\u0001b.txt', 'a_b.txt'],
    ['emoji', 'ok 😀 (1)*.txt', 'ok _ (1)*.txt'],
  ])('downloads a file named %s with its bytes and its real name', async (name, filename, ascii) => {
    const content = Buffer.from([0xff, 0x00, 0x41, 0x0a]);
    const res = await roundTrip(name, filename, content);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.rawPayload.equals(content)).toBe(true);
    const header = String(res.headers['content-disposition']);
    expect(header).toMatch(/^[\x20-\x7e]+$/);
    expect(disposition(header)).toEqual({ type: 'attachment', filename: ascii, filenameStar: filename });
  });

  it('keeps a plain ASCII name as it is in both parameters', async () => {
    const res = await roundTrip('plain', 'report-1.xml', Buffer.from('<x/>'));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="report-1.xml"; filename*=UTF-8''report-1.xml`,
    );
  });
});
