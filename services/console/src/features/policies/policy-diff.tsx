/** Two versions of a policy side by side as a line diff, long unchanged stretches folded. */
import type { FormEvent } from 'react';
import { Field } from '../../components/field';
import type { Policy } from '../../lib/contract';
import { formText } from '../../lib/form';
import { plural } from '../../lib/format';
import { lineDiff, MAX_DIFF_CELLS, type DiffLine } from './line-diff';
import { TableBox } from '../../components/table-box';

type Version = Policy['versions'][number];

/** Unchanged lines kept around each change; longer unchanged stretches are folded. */
const CONTEXT = 3;
/** Rows of a diff shown at most; the rest is said in words. */
export const MAX_DIFF_ROWS = 2_000;

type Row = DiffLine | { kind: 'fold'; count: number };

/** The diff's lines with each unchanged stretch longer than twice CONTEXT folded into one row. */
function fold(lines: DiffLine[]): Row[] {
  const rows: Row[] = [];
  let k = 0;
  while (k < lines.length) {
    if (lines[k]!.kind !== 'same') {
      rows.push(lines[k]!);
      k++;
      continue;
    }
    let end = k;
    while (end < lines.length && lines[end]!.kind === 'same') {
      end++;
    }
    const keepHead = k === 0 ? 0 : CONTEXT;
    const keepTail = end === lines.length ? 0 : CONTEXT;
    if (end - k > keepHead + keepTail + 1) {
      rows.push(...lines.slice(k, k + keepHead));
      rows.push({ kind: 'fold', count: end - k - keepHead - keepTail });
      rows.push(...lines.slice(end - keepTail, end));
    } else {
      rows.push(...lines.slice(k, end));
    }
    k = end;
  }
  return rows;
}

const WORD = { same: 'unchanged', removed: 'removed', added: 'added' } as const;
const SIGN = { same: ' ', removed: '−', added: '+' } as const;

function DiffRow({ row }: { row: Row }) {
  if (row.kind === 'fold') {
    return (
      <tr className="diff-fold">
        <td colSpan={3}>… {plural(row.count, 'unchanged line')}</td>
      </tr>
    );
  }
  return (
    <tr className={`diff-${row.kind}`}>
      <td className="num">{row.kind === 'added' ? '' : row.old}</td>
      <td className="num">{row.kind === 'removed' ? '' : row.new}</td>
      <td>
        <span aria-hidden="true" className="diff-sign">
          {SIGN[row.kind]}
        </span>
        <span className="visually-hidden">{WORD[row.kind]}: </span>
        <code>{row.text}</code>
      </td>
    </tr>
  );
}

export function VersionDiff({ from, to }: { from: Version; to: Version }) {
  const diff = lineDiff(from.policy_yaml, to.policy_yaml);
  const rows = fold(diff.lines);
  const shown = rows.slice(0, MAX_DIFF_ROWS);
  return (
    <>
      <p role="status">
        From v{from.version} to v{to.version}:{' '}
        {diff.added === 0 && diff.removed === 0
          ? 'the same text.'
          : `${plural(diff.added, 'line')} added, ${plural(diff.removed, 'line')} removed.`}
      </p>
      {diff.coarse && (
        <p className="muted">
          The versions differ over too many lines to align them one by one (more than{' '}
          {MAX_DIFF_CELLS.toLocaleString('en')} line pairs): every differing line of v{from.version} is shown
          removed, then every line of v{to.version} added.
        </p>
      )}
      {diff.lines.length > 0 && (
        <div className="table-scroll">
          <TableBox>
            <table className="compact line-diff">
              <caption className="visually-hidden">{`Changes from v${from.version} to v${to.version}`}</caption>
              <thead>
                <tr>
                  <th scope="col">{`v${from.version}`}</th>
                  <th scope="col">{`v${to.version}`}</th>
                  <th scope="col">Line</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((row, i) => (
                  <DiffRow key={i} row={row} />
                ))}
              </tbody>
            </table>
          </TableBox>
        </div>
      )}
      {rows.length > shown.length && (
        <p className="muted">
          The first {MAX_DIFF_ROWS.toLocaleString('en')} rows of {rows.length.toLocaleString('en')} are shown.
        </p>
      )}
    </>
  );
}

/** The two versions to compare, and their diff. */
export function CompareVersions({
  versions,
  from,
  to,
  onCompare,
}: {
  versions: Version[];
  from: number;
  to: number;
  onCompare: (from: number, to: number) => void;
}) {
  if (versions.length < 2) {
    return <p>This policy has one version: there is nothing to compare yet.</p>;
  }
  const older = versions.find((v) => v.version === from);
  const newer = versions.find((v) => v.version === to);
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    onCompare(Number(formText(form, 'from')), Number(formText(form, 'to')));
  };
  const options = versions.map((v) => (
    <option key={v.version} value={v.version}>
      v{v.version}
    </option>
  ));
  return (
    <>
      <form className="filters" onSubmit={onSubmit} aria-label="Versions to compare" key={`${from}-${to}`}>
        <Field id="diff-from" label="From version">
          <select id="diff-from" name="from" defaultValue={String(from)}>
            {options}
          </select>
        </Field>
        <Field id="diff-to" label="To version">
          <select id="diff-to" name="to" defaultValue={String(to)}>
            {options}
          </select>
        </Field>
        <button type="submit">Compare</button>
      </form>
      {older && newer ? (
        <VersionDiff from={older} to={newer} />
      ) : (
        <p role="alert">
          This policy has no version {older ? to : from}: its versions are v1 to v{versions.length}.
        </p>
      )}
    </>
  );
}
