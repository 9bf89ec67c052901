/**
 * Validates a report in slices of entries, letting the event loop turn between them: a report at
 * the cap (MAX_REPORT_ARTIFACTS entries) is over a second of validation in one piece. Each slice
 * is parsed with the whole schema (envelope and that slice's entries); issue paths are those of
 * the whole body. A body over the cap is parsed in one piece, which refuses it.
 */
import { setImmediate as turn } from 'node:timers/promises';
import type { z } from 'zod';
import { MAX_REPORT_ARTIFACTS } from '../../../../shared/contract/environment-reports.js';

const SLICE = 2_000;

type Parsed<S extends z.ZodType> =
  { success: true; data: z.output<S> } | { success: false; issues: z.core.$ZodIssue[] };

export async function parseReport<S extends z.ZodType>(schema: S, body: unknown): Promise<Parsed<S>> {
  const entries = (body as { artifacts?: unknown } | null)?.artifacts;
  if (!Array.isArray(entries) || entries.length <= SLICE || entries.length > MAX_REPORT_ARTIFACTS) {
    const r = schema.safeParse(body);
    return r.success ? { success: true, data: r.data } : { success: false, issues: r.error.issues };
  }
  const issues: z.core.$ZodIssue[] = [];
  const parsed: unknown[] = [];
  let envelope: Record<string, unknown> = {};
  // Bounded by the report cap: MAX_REPORT_ARTIFACTS / SLICE slices.
  for (let start = 0; start < entries.length; start += SLICE) {
    if (start > 0) {
      await turn();
    }
    const r = schema.safeParse({ ...(body as object), artifacts: entries.slice(start, start + SLICE) });
    if (r.success) {
      envelope = r.data as Record<string, unknown>;
      parsed.push(...(envelope.artifacts as unknown[]));
      continue;
    }
    for (const issue of r.error.issues) {
      const [key, index, ...rest] = issue.path;
      if (key === 'artifacts' && typeof index === 'number') {
        issues.push({ ...issue, path: [key, index + start, ...rest] });
      } else if (start === 0) {
        issues.push(issue);
      }
    }
  }
  return issues.length > 0
    ? { success: false, issues }
    : { success: true, data: { ...envelope, artifacts: parsed } as z.output<S> };
}
