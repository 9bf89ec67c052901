/**
 * Multipart bodies as the CLI writes them (Go mime/multipart): JSON in a field part, files in
 * file parts. `readMultipartForm` collects the named parts and refuses anything else, so a route
 * validates a form the way it validates a JSON body.
 */
import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import fp from 'fastify-plugin';
import multipart, { type Multipart } from '@fastify/multipart';
import { sha256 } from '../sha256.js';
import type { FastifyRequest } from 'fastify';
import { BadRequestError, PayloadTooLargeError } from '../errors.js';
import { assertStorableText } from './request-text.js';

/** One part of a form: a field (no filename) or a file. */
export interface FormPart {
  name: string;
  filename: string | undefined;
  mimetype: string | undefined;
  /** The part's bytes; empty for a part spooled to a file (`spooled`). */
  data: Buffer;
  /** The data's SHA-256, hex. */
  readonly sha256: string;
  /** A `bytes` part: held while small, else written to a temporary file removed when the response is sent. */
  spooled?: SpooledFile;
}

/** A file part: in memory while small, on disk beyond `SPOOL_MEMORY_BYTES`. */
export interface SpooledFile {
  /** The temporary file, when it went to disk. */
  path: string | null;
  /** The bytes, when they stayed in memory. */
  data: Buffer | null;
  size: number;
  /** Its first bytes (at most `HEAD_BYTES`): enough to tell a gzip or a JSON document. */
  head: Buffer;
}

/** A file part up to this size stays in memory; a larger one goes to a temporary file. */
const SPOOL_MEMORY_BYTES = 1024 * 1024;

/** How many leading bytes of a spooled file are kept in memory. */
const HEAD_BYTES = 4096;

declare module 'fastify' {
  interface FastifyRequest {
    /** Temporary directories of this request's spooled parts. */
    spoolDirs: string[] | null;
  }
}

export interface FormSpec {
  /** Part names the route accepts; any other part is a 400. */
  allowed: readonly string[];
  /** Part names that must be present. */
  required?: readonly string[];
  /** Largest file part, bytes; defaults to the configured upload limit. */
  maxFileBytes?: number;
  /**
   * Parts whose contents are opaque bytes (evidence files), never read as text, and written to a
   * temporary file while summed rather than held in memory (`FormPart.spooled`). Every other part
   * is text the database may store: a NUL or a lone surrogate in it, or in any string of it when
   * it is JSON, is a 400.
   */
  bytes?: readonly string[];
}

export default fp(
  async (app) => {
    await app.register(multipart, {
      limits: {
        fileSize: app.config.uploadLimitBytes,
        fieldSize: app.config.bodyLimitBytes,
        parts: 50,
        files: 10,
        headerPairs: 100,
      },
    });
    app.decorateRequest('spoolDirs', null);
    const removeSpooled = async (request: FastifyRequest) => {
      const dirs = request.spoolDirs;
      request.spoolDirs = null;
      for (const dir of dirs ?? []) {
        await rm(dir, { recursive: true, force: true }).catch((err: unknown) =>
          request.log.warn({ err, dir }, 'could not remove an upload spool directory'),
        );
      }
    };
    // Before the answer goes out (the handler is done with the files), so none outlives it; and
    // when the client goes away first.
    app.addHook('onSend', async (request, _reply, payload) => {
      await removeSpooled(request);
      return payload;
    });
    app.addHook('onResponse', removeSpooled);
    app.addHook('onRequestAbort', removeSpooled);
  },
  { name: 'multipart', dependencies: ['db'] },
);

/** Reads a multipart form into its parts by name, enforcing the route's spec and the size limits. */
export async function readMultipartForm(
  request: FastifyRequest,
  spec: FormSpec,
): Promise<Map<string, FormPart>> {
  if (!request.isMultipart()) {
    throw new BadRequestError('Expected a multipart/form-data body', {
      body: `send the parts ${spec.allowed.join(', ')} as multipart/form-data`,
    });
  }
  const parts = new Map<string, FormPart>();
  const maxFileBytes = spec.maxFileBytes ?? request.server.config.uploadLimitBytes;
  try {
    for await (const part of request.parts({ limits: { fileSize: maxFileBytes } })) {
      if (!spec.allowed.includes(part.fieldname)) {
        if (part.type === 'file') {
          part.file.resume();
        }
        throw new BadRequestError('Input payload validation failed', {
          [part.fieldname]: `unexpected form part; expected one of: ${spec.allowed.join(', ')}`,
        });
      }
      if (parts.has(part.fieldname)) {
        if (part.type === 'file') {
          part.file.resume();
        }
        throw new BadRequestError('Input payload validation failed', {
          [part.fieldname]: 'form part sent more than once',
        });
      }
      parts.set(part.fieldname, await readPart(request, part, spec, maxFileBytes));
    }
  } catch (err) {
    if (err instanceof BadRequestError || err instanceof PayloadTooLargeError) {
      throw err;
    }
    const code = (err as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') {
      throw new PayloadTooLargeError(`A file part is larger than the limit of ${maxFileBytes} bytes`);
    }
    if (code === 'FST_INVALID_JSON_FIELD_ERROR') {
      throw new BadRequestError('Input payload validation failed', {
        body: 'a form part sent as application/json is not valid JSON',
      });
    }
    if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT') {
      throw new PayloadTooLargeError(`Too many form parts: ${(err as Error).message}`);
    }
    throw new BadRequestError('Malformed multipart body', { body: (err as Error).message });
  }
  for (const name of spec.required ?? []) {
    if (!parts.has(name)) {
      throw new BadRequestError('Input payload validation failed', { [name]: 'Field required' });
    }
  }
  for (const part of parts.values()) {
    if (!spec.bytes?.includes(part.name)) {
      assertStorablePart(part);
    }
  }
  return parts;
}

/** One part: a `bytes` file part spooled to disk, any other read into memory. */
async function readPart(
  request: FastifyRequest,
  part: Multipart,
  spec: FormSpec,
  maxFileBytes: number,
): Promise<FormPart> {
  if (part.type === 'file' && spec.bytes?.includes(part.fieldname)) {
    const spooled = await spool(request, part.file, maxFileBytes);
    return {
      name: part.fieldname,
      filename: part.filename,
      mimetype: part.mimetype,
      data: Buffer.alloc(0),
      sha256: spooled.sha256,
      spooled: spooled.file,
    };
  }
  // A field sent with Content-Type application/json (curl -F 'x=...;type=application/json',
  // a browser's Blob) arrives parsed; the route parses its text like any other field's.
  const data =
    part.type === 'file'
      ? await part.toBuffer()
      : Buffer.from(typeof part.value === 'string' ? part.value : JSON.stringify(part.value));
  let sum: string | undefined;
  return {
    name: part.fieldname,
    filename: part.type === 'file' ? part.filename : undefined,
    mimetype: part.type === 'file' ? part.mimetype : undefined,
    data,
    // Taken when asked for: most parts are JSON fields nobody sums.
    get sha256() {
      return (sum ??= sha256(data));
    },
  };
}

/**
 * Reads a file part, summing it on the way: a small one into memory, a larger one into a
 * temporary file of its own, so the request holds at most `SPOOL_MEMORY_BYTES` and a few chunks
 * whatever the file's size. The file goes when the response is sent.
 */
async function spool(
  request: FastifyRequest,
  file: NodeJS.ReadableStream & { truncated?: boolean },
  maxFileBytes: number,
): Promise<{ sha256: string; file: SpooledFile }> {
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let headBytes = 0;
  let size = 0;
  let held: Buffer[] = [];
  let path: string | null = null;
  let out: WriteStream | null = null;
  const toDisk = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'verity-upload-'));
    (request.spoolDirs ??= []).push(dir);
    path = join(dir, 'part');
    out = createWriteStream(path);
    for (const chunk of held) {
      out.write(chunk);
    }
    held = [];
    return out;
  };
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      if (headBytes < HEAD_BYTES) {
        const take = chunk.subarray(0, HEAD_BYTES - headBytes);
        head.push(Buffer.from(take));
        headBytes += take.length;
      }
      if (!out && size <= SPOOL_MEMORY_BYTES) {
        held.push(chunk);
        done();
        return;
      }
      const ready: Promise<WriteStream> = out ? Promise.resolve(out) : toDisk();
      ready.then(
        (w) => (w.write(chunk) ? done() : w.once('drain', () => done())),
        (err: Error) => done(err),
      );
    },
    final(done) {
      const w = out;
      if (!w) {
        done();
        return;
      }
      w.once('error', done);
      w.end(() => done());
    },
  });
  await pipeline(file, sink);
  if (file.truncated) {
    throw new PayloadTooLargeError(`A file part is larger than the limit of ${maxFileBytes} bytes`);
  }
  const data = path === null ? Buffer.concat(held) : null;
  return { sha256: hash.digest('hex'), file: { path, data, size, head: Buffer.concat(head) } };
}

/**
 * The text checks of request-text.ts for a form part: its text, and every string of it when it
 * is a JSON document (data_json, payload, a JSON Schema). Text that does not parse is left to
 * the route, which reports it as not JSON.
 */
function assertStorablePart(part: FormPart): void {
  const text = part.data.toString('utf8');
  assertStorableText(text, part.name);
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') {
    return;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return;
  }
  assertStorableText(json, part.name);
}
