/** How zod issues become the `errors` map the CLI prints. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatIssuePath, issuesToFieldErrors } from '../../services/api/src/errors.js';

describe('field errors', () => {
  it('renders paths with dots and array indexes', () => {
    expect(formatIssuePath(['artifacts', 0, 'digests'])).toBe('artifacts[0].digests');
    expect(formatIssuePath([])).toBe('');
  });

  it('keys each problem by context and path', () => {
    const schema = z.strictObject({ artifacts: z.array(z.strictObject({ podName: z.string() })) });
    const result = schema.safeParse({
      artifacts: [{ podName: 1 }, { podName: 'ok', extra: true }],
      other: 1,
    });
    expect(result.success).toBe(false);
    const errors = issuesToFieldErrors(result.error!.issues, 'body');
    expect(Object.keys(errors).sort()).toEqual([
      'body.artifacts[0].podName',
      'body.artifacts[1].extra',
      'body.other',
    ]);
    expect(errors['body.other']).toBe('Extra inputs are not permitted');
  });

  it('names the body itself when the whole body is wrong', () => {
    const result = z.strictObject({ a: z.string() }).safeParse('text');
    expect(Object.keys(issuesToFieldErrors(result.error!.issues, 'body'))).toEqual(['body']);
  });
});
