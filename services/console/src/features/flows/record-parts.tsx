/** Parts the trail and artifact pages both show: a commit in one line, and the user data sent. */
import type { ReactNode } from 'react';
import { jsonText, short } from '../../lib/format';

/** The commit's short sha (or what `shaLink` makes of it), its subject and its author. */
export function CommitSummary({
  sha,
  info,
  shaLink = (code) => code,
}: {
  sha: string;
  info: { message?: string | null; author?: string | null } | null | undefined;
  shaLink?: (code: ReactNode) => ReactNode;
}) {
  return (
    <>
      {shaLink(<code>{short(sha, 10)}</code>)} {info?.message?.split('\n')[0]}
      {info?.author && ` · ${info.author}`}
    </>
  );
}

/** The user data of a record, folded, unless there is none. */
export function UserData({ data }: { data: unknown }) {
  if (data === null || data === undefined || jsonText(data) === '{}') {
    return null;
  }
  return (
    <details>
      <summary>User data</summary>
      <pre>{jsonText(data)}</pre>
    </details>
  );
}
