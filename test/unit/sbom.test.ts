/** SBOM format detection and component extraction (domain/sbom.ts), and exposure intervals (domain/exposure.ts). */
import { describe, expect, it } from 'vitest';
import { exposureIntervals, runsOf } from '../../services/api/src/domain/exposure.js';
import { extractSbomComponents, parsePurl, sbomFormatOf } from '../../services/api/src/domain/sbom.js';

describe('parsePurl', () => {
  it.each([
    ['pkg:npm/lodash@4.17.21', { type: 'npm', namespace: '', name: 'lodash', version: '4.17.21' }],
    [
      'pkg:NPM/%40angular/core@17.0.0?arch=x64',
      { type: 'npm', namespace: '@angular', name: 'core', version: '17.0.0' },
    ],
    ['pkg:pypi/Django_Rest@3.0', { type: 'pypi', namespace: '', name: 'django-rest', version: '3.0' }],
    [
      'pkg:maven/org.apache/commons-lang3',
      { type: 'maven', namespace: 'org.apache', name: 'commons-lang3', version: '' },
    ],
  ])('normalises %s', (text, parts) => {
    expect(parsePurl(text)).toMatchObject(parts);
  });

  it('keeps qualifiers in the canonical purl', () => {
    expect(parsePurl('pkg:npm/%40angular/core@17.0.0?arch=x64').purl).toBe(
      'pkg:npm/%40angular/core@17.0.0?arch=x64',
    );
  });

  it.each(['npm/lodash', 'pkg:npm', 'pkg:/lodash', ''])('refuses %j', (text) => {
    expect(() => parsePurl(text)).toThrow();
  });
});

describe('extractSbomComponents', () => {
  it('tells the format by content', () => {
    expect(sbomFormatOf({ bomFormat: 'CycloneDX' })).toBe('CycloneDX');
    expect(sbomFormatOf({ spdxVersion: 'SPDX-2.3' })).toBe('SPDX');
    expect(sbomFormatOf({ name: 'x' })).toBeNull();
    expect(sbomFormatOf([{ bomFormat: 'CycloneDX' }])).toBeNull();
  });

  it.each(['1.4', '1.5', '1.6'])(
    'reads CycloneDX %s, nested components included, duplicates once',
    (specVersion) => {
      const r = extractSbomComponents({
        bomFormat: 'CycloneDX',
        specVersion,
        components: [
          { purl: 'pkg:npm/a@1' },
          { name: 'no purl', components: [{ purl: 'pkg:npm/b@2' }, { purl: 'pkg:npm/a@1' }] },
          { purl: 'bad' },
        ],
      });
      expect(r).toMatchObject({ format: 'CycloneDX', specVersion, skipped: 1, reason: null });
      expect(r.components.map((c) => c.purl).sort()).toEqual(['pkg:npm/a@1', 'pkg:npm/b@2']);
    },
  );

  it.each(['SPDX-2.2', 'SPDX-2.3'])('reads %s package purl references', (spdxVersion) => {
    const r = extractSbomComponents({
      spdxVersion,
      packages: [
        {
          externalRefs: [
            {
              referenceCategory: 'PACKAGE-MANAGER',
              referenceType: 'purl',
              referenceLocator: 'pkg:golang/github.com/x/y@v1.0.0',
            },
          ],
        },
        {
          externalRefs: [
            { referenceCategory: 'SECURITY', referenceType: 'cpe23Type', referenceLocator: 'cpe:2.3:a:x' },
          ],
        },
        { name: 'no refs' },
      ],
    });
    expect(r).toMatchObject({ format: 'SPDX', specVersion: spdxVersion, reason: null });
    expect(r.components).toEqual([
      {
        type: 'golang',
        namespace: 'github.com/x',
        name: 'y',
        version: 'v1.0.0',
        purl: 'pkg:golang/github.com/x/y@v1.0.0',
      },
    ]);
  });

  it.each([
    [{ bomFormat: 'CycloneDX', specVersion: '1.3', components: [] }, /specVersion "1.3" is not supported/],
    [{ bomFormat: 'CycloneDX', specVersion: '1.5', components: 'x' }, /"components" is not an array/],
    [{ bomFormat: 'CycloneDX', specVersion: '1.5', components: [1] }, /not an object/],
    [{ bomFormat: 'CycloneDX', specVersion: '1.5', components: [{ purl: 7 }] }, /"purl" is not a string/],
    [{ spdxVersion: 'SPDX-2.1' }, /SPDX version "SPDX-2.1" is not supported/],
    [{ spdxVersion: 'SPDX-2.3', packages: {} }, /"packages" is not an array/],
    [{ name: 'x' }, /not a CycloneDX or SPDX/],
  ])('says why %j is not indexed', (doc, reason) => {
    const r = extractSbomComponents(doc);
    expect(r.components).toEqual([]);
    expect(r.reason).toMatch(reason);
  });
});

describe('exposure intervals', () => {
  const snaps = (list: Array<[number, number, boolean | null]>) =>
    list.map(([index, at, compliant]) => ({ index, at, compliant }));

  it('rebuilds runs from states: replaced states continue a run, an exit ends it', () => {
    expect(
      runsOf([
        { runStart: 1, fromIndex: 1, toIndex: 3 },
        { runStart: 1, fromIndex: 3, toIndex: 5 },
        { runStart: 7, fromIndex: 7, toIndex: null },
      ]),
    ).toEqual([
      { start: 1, end: 5 },
      { start: 7, end: null },
    ]);
  });

  it('cuts a run where the environment compliance changes, and leaves a running one open', () => {
    const s = snaps([
      [1, 100, true],
      [2, 200, true],
      [3, 300, false],
      [4, 400, true],
      [5, 500, true],
    ]);
    expect(
      exposureIntervals(
        [
          { start: 1, end: 4 },
          { start: 5, end: null },
        ],
        s,
        {},
      ),
    ).toEqual([
      { from: 100, to: 300, fromSnapshot: 1, toSnapshot: 3, compliant: true },
      { from: 300, to: 400, fromSnapshot: 3, toSnapshot: 4, compliant: false },
      { from: 500, to: null, fromSnapshot: 5, toSnapshot: null, compliant: true },
    ]);
  });

  it('clips to the window with the snapshots in effect at its ends, and drops what lies outside', () => {
    const s = snaps([
      [1, 100, true],
      [2, 200, true],
      [3, 300, true],
      [4, 400, null],
    ]);
    expect(exposureIntervals([{ start: 1, end: 4 }], s, { from: 250, to: 350 })).toEqual([
      { from: 250, to: 350, fromSnapshot: 2, toSnapshot: 3, compliant: true },
    ]);
    expect(exposureIntervals([{ start: 1, end: 3 }], s, { from: 300 })).toEqual([]);
    expect(exposureIntervals([{ start: 3, end: null }], s, { to: 250 })).toEqual([]);
  });
});
