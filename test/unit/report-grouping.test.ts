import { describe, expect, it } from 'vitest';
import {
  groupReport,
  groupReportInSlices,
  reportKey,
  SLICE,
  type ReportEntry,
} from '../../services/api/src/domain/snapshot-diff.js';
import { sha256 } from '../../services/api/src/sha256.js';
import { groupAndHash } from '../../services/api/src/usecases/runtime/report-grouping.js';

const digest = (i: number) => sha256(`image ${i}`);

/** `pods` pods over `pods / 3` images, every fifth pod with a second container (a sidecar). */
function report(pods: number): ReportEntry[] {
  return Array.from({ length: pods }, (_, i) => ({
    podName: `pod-${pods - i}`,
    namespace: `ns-${i % 7}`,
    creationTimestamp: 1_700_000_000 + (i % 11),
    digests: {
      [`app-${i % Math.ceil(pods / 3)}`]: digest(i % Math.ceil(pods / 3)),
      ...(i % 5 === 0 ? { sidecar: digest(-1), empty: '' } : {}),
    },
  }));
}

describe.each([10, 50_000])('a report of %i pods', (pods) => {
  it('groups and hashes as the unsliced functions do', async () => {
    const entries = report(pods);
    const expected = groupReport(entries).map((a) => ({
      ...a,
      detailHash: sha256(a.detailKey),
      instanceCount: a.instances.length,
    }));
    const { grouped, reportHash } = await groupAndHash(entries);
    expect(grouped).toEqual(expected);
    expect(reportHash).toBe(sha256(reportKey(expected)));
    expect(grouped.find((a) => a.name === 'sidecar')?.instanceCount).toBe(Math.ceil(pods / 5));
  });

  it('pauses after every slice of entries and of fingerprints', () => {
    const entries = report(pods);
    const steps = groupReportInSlices(entries);
    let pauses = 0;
    while (!steps.next().done) {
      pauses += 1;
    }
    const fingerprints = groupReport(entries).length;
    expect(pauses).toBe(Math.floor(pods / SLICE) + Math.floor(fingerprints / SLICE));
  });
});
