/** Reading tar archives in tests (audit packages). */
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
