/** Tar archives in tests and benches: reading audit packages, packing `evidence.tgz` as the CLI does. */
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';

/** The members of a tar archive, by name. */
export async function untar(buffer: Buffer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const extract = tar.extract();
  await new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => void chunks.push(c as Buffer));
      stream.on('end', () => {
        files.set(header.name, Buffer.concat(chunks));
        next();
      });
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
    extract.end(buffer);
  });
  return files;
}

/** A gzipped tar of these members, as the CLI packs `evidence.tgz` from several attachments. */
export async function tgz(files: Iterable<[string, Buffer | string]>): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, content] of files) {
    pack.entry({ name }, content);
  }
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack.pipe(createGzip())) {
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}
