/**
 * The members of a gzipped tar archive (the kosli CLI tars several `--attachments` into
 * `evidence.tgz`) that a caller wants, read in memory within bounds: the archive expands to at
 * most `maxBytes` (gunzip fails with `ERR_BUFFER_TOO_LARGE` beyond) and holds at most
 * `maxMembers` members; at most `limit` members are kept. Rejects when the data is not a gzipped
 * tar archive or passes a bound.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import tar from 'tar-stream';

const gunzipAsync = promisify(gunzip);

export const isGzip = (data: Uint8Array): boolean => data.length > 2 && data[0] === 0x1f && data[1] === 0x8b;

export async function archiveMembers(
  gz: Buffer,
  bounds: { maxBytes: number; maxMembers: number; limit: number },
  wanted: (name: string, data: Buffer) => boolean,
): Promise<Array<{ name: string; data: Buffer }>> {
  const archive = await gunzipAsync(gz, { maxOutputLength: bounds.maxBytes });
  const found: Array<{ name: string; data: Buffer }> = [];
  const extract = tar.extract();
  let members = 0;
  await new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      members += 1;
      if (members > bounds.maxMembers) {
        stream.resume();
        extract.destroy(new Error(`more than ${bounds.maxMembers} members`));
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => void chunks.push(c as Buffer));
      stream.on('end', () => {
        const data = Buffer.concat(chunks);
        if (header.type === 'file' && found.length < bounds.limit && wanted(header.name, data)) {
          found.push({ name: header.name, data });
        }
        next();
      });
      stream.on('error', reject);
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
    extract.end(archive);
  });
  return found;
}
