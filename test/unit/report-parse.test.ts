import { describe, expect, it } from 'vitest';
import { K8sReport, MAX_REPORT_ARTIFACTS } from '../../services/shared/contract/environment-reports.js';
import { parseReport } from '../../services/api/src/usecases/runtime/report-parse.js';

const pod = (i: number) => ({
  podName: `pod-${i}`,
  namespace: 'prod',
  digests: { [`app:${i}`]: 'a'.repeat(64) },
  creationTimestamp: 1_700_000_000 + i,
});

describe('parseReport', () => {
  it.each([3, MAX_REPORT_ARTIFACTS])(
    'gives what safeParse gives for a valid report of %i pods',
    async (n) => {
      const body = { type: 'K8S', artifacts: Array.from({ length: n }, (_, i) => pod(i)) };
      expect(await parseReport(K8sReport, body)).toEqual({ success: true, data: K8sReport.parse(body) });
    },
  );

  it('names the entries in error by their place in the whole report, and envelope errors once', async () => {
    const artifacts: unknown[] = Array.from({ length: 10_000 }, (_, i) => pod(i));
    artifacts[4_500] = { ...pod(4_500), digests: { app: 'not-hex' } };
    artifacts[9_999] = { ...pod(9_999), creationTimestamp: -1 };
    const body = { artifacts, extra: true };
    const result = await parseReport(K8sReport, body);
    const expected = K8sReport.safeParse(body);
    expect(result.success).toBe(false);
    expect(expected.success).toBe(false);
    const paths = (issues: Array<{ path: PropertyKey[] }>) => issues.map((i) => i.path.join('.')).sort();
    expect(paths(result.success ? [] : result.issues)).toEqual(paths(expected.error!.issues));
    expect(paths(result.success ? [] : result.issues)).toEqual([
      '',
      'artifacts.4500.digests.app',
      'artifacts.9999.creationTimestamp',
    ]);
  });

  it('refuses a report over the cap', async () => {
    const body = { artifacts: Array.from({ length: MAX_REPORT_ARTIFACTS + 1 }, (_, i) => pod(i)) };
    const result = await parseReport(K8sReport, body);
    expect(result.success).toBe(false);
  });
});
