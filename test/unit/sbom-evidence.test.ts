import { describe, expect, it } from 'vitest';
import { readSbom } from '../../services/api/src/usecases/evidence/sbom-evidence.js';
import { tgz } from '../helpers/tar.js';

const bom = JSON.stringify({
  bomFormat: 'CycloneDX',
  specVersion: '1.5',
  components: [{ type: 'library', name: 'lodash', purl: 'pkg:npm/lodash@4.17.20' }],
});

describe('SBOMs inside an evidence archive', () => {
  it('indexes an SBOM member of an archive', async () => {
    const data = await tgz(Object.entries({ 'reports/junit.xml': '<testsuite/>', 'sbom.cdx.json': bom }));
    const read = await readSbom({ kind: 'file', filename: 'evidence.tgz', data });
    expect(read?.index).toMatchObject({ indexed: true, components: 1 });
  });

  it('does not expand an archive past its bound (a gzip bomb), and says why it was not indexed', async () => {
    // 40 MiB of zeros packs to a few dozen KiB: small to upload, large to unpack.
    const data = await tgz(
      Object.entries({ 'sbom.cdx.json': bom, 'padding.bin': Buffer.alloc(40 * 1024 * 1024) }),
    );
    expect(data.length).toBeLessThan(1024 * 1024);
    const read = await readSbom({ kind: 'file', filename: 'evidence.tgz', data });
    expect(read?.index).toMatchObject({
      indexed: false,
      components: 0,
      reason: 'the archive expands beyond 32 MiB: not looked into',
    });
  });
});
