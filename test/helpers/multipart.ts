/**
 * Multipart bodies byte for byte as Go's mime/multipart writes them for the kosli CLI: field parts
 * with only a Content-Disposition, file parts with a filename and application/octet-stream.
 */
import { randomBytes } from 'node:crypto';

export type Part =
  | { name: string; value: string }
  | { name: string; filename: string; content: Buffer | string; contentType?: string };

/** The body and Content-Type header of a form. */
export function goMultipart(parts: Part[]): { body: Buffer; contentType: string } {
  // Go uses 30 random bytes in hex as the boundary.
  const boundary = randomBytes(30).toString('hex');
  const chunks: Buffer[] = [];
  parts.forEach((p, i) => {
    chunks.push(Buffer.from(`${i === 0 ? '' : '\r\n'}--${boundary}\r\n`));
    if ('value' in p) {
      chunks.push(Buffer.from(`Content-Disposition: form-data; name="${p.name}"\r\n\r\n`));
      chunks.push(Buffer.from(p.value));
    } else {
      chunks.push(
        Buffer.from(
          `Content-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\nContent-Type: ${p.contentType ?? 'application/octet-stream'}\r\n\r\n`,
        ),
      );
      chunks.push(typeof p.content === 'string' ? Buffer.from(p.content) : p.content);
    }
  });
  chunks.push(Buffer.from(`\r\n--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
