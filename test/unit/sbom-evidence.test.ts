import { createGzip } from 'node:zlib';
import tar from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { readSbom } from '../../services/api/src/usecases/evidence/sbom-evidence.js';

/** A gzipped tar of these members, as the CLI packs `evidence.tgz`. */
async function tgz(files: Record<string, Buffer | string>): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, content] of Object.entries(files)) {
    pack.entry({ name }, content);
  }
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack.pipe(createGzip())) {
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

const bom = JSON.stringify({
  bomFormat: 'CycloneDX',
  specVersion: '1.5',
  components: [{ type: 'library', name: 'lodash', purl: 'pkg:npm/lodash@4.17.20' }],
});

describe('SBOMs inside an evidence archive', () => {
  it('indexes an SBOM member of an archive', async () => {
    const data = await tgz({ 'reports/junit.xml': '<testsuite/>', 'sbom.cdx.json': bom });
    const read = await readSbom({ kind: 'file', filename: 'evidence.tgz', data });
    expect(read?.index).toMatchObject({ indexed: true, components: 1 });
  });

  it('does not expand an archive past its bound (a gzip bomb), and says why it was not indexed', async () => {
    // 40 MiB of zeros packs to a few dozen KiB: small to upload, large to unpack.
    const data = await tgz({ 'sbom.cdx.json': bom, 'padding.bin': Buffer.alloc(40 * 1024 * 1024) });
    expect(data.length).toBeLessThan(1024 * 1024);
    const read = await readSbom({ kind: 'file', filename: 'evidence.tgz', data });
    expect(read?.index).toMatchObject({
      indexed: false,
      components: 0,
      reason: 'the archive expands beyond 32 MiB: not looked into',
    });
  });
});
