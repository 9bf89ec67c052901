/**
 * "Preview on an environment": attach the version shown, or detach the policy, over the latest
 * snapshot or the last N, and list per snapshot the artifacts whose compliance would flip, with
 * the reasons, as the API's policy preview answers. It changes nothing.
 */
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { Field } from '../../components/field';
import { ErrorMessage } from '../../components/query-state';
import { ComplianceBadge } from '../../components/state-badge';
import { ColumnHeads } from '../../components/table-head';
import type { PolicyPreview } from '../../lib/contract';
import { formText } from '../../lib/form';
import { formatTime, paths, plural, short } from '../../lib/format';
import { MAX_PREVIEW_SNAPSHOTS, useEnvironmentNames, usePreview, type PreviewRequest } from './api';
import { TableBox } from '../../components/table-box';

type PreviewSnapshot = PolicyPreview['snapshots'][number];

const fails = (compliant: boolean | null) => compliant === false;

/** A snapshot is listed when an artifact flips there or the environment's compliance changes. */
const changed = (s: PreviewSnapshot) => s.changes.length > 0 || s.compliant_now !== s.compliant_with_change;

function SnapshotChanges({ org, env, s }: { org: string; env: string; s: PreviewSnapshot }) {
  return (
    <section aria-label={`Snapshot #${s.index}`} className="preview-snapshot">
      <h4>
        <Link to={paths.snapshot(org, env, s.index)}>Snapshot #{s.index}</Link>{' '}
        <span className="muted small">taken {formatTime(s.taken_at)}</span>
      </h4>
      <p>
        Environment: <ComplianceBadge compliant={s.compliant_now} unknown="no-policy" /> now,{' '}
        <ComplianceBadge compliant={s.compliant_with_change} unknown="no-policy" /> with the change
        {fails(s.compliant_now) !== fails(s.compliant_with_change) ? ' (flips)' : ''}.
      </p>
      {s.changes.length === 0 ? (
        <p className="muted">No artifact flips here.</p>
      ) : (
        <div className="table-scroll">
          <TableBox>
            <table>
              <caption className="visually-hidden">{`Artifacts that flip in snapshot #${s.index}`}</caption>
              <ColumnHeads columns={['Artifact', 'Now', 'With the change', 'Reasons']} />
              <tbody>
                {s.changes.map((c) => (
                  <tr key={`${c.fingerprint}-${c.name}`}>
                    <th scope="row">
                      {c.name}
                      <div className="small">
                        <code title={c.fingerprint}>{short(c.fingerprint, 16)}</code>
                      </div>
                    </th>
                    <td>
                      <ComplianceBadge compliant={c.compliant_now} unknown="no-policy" />
                    </td>
                    <td>
                      <ComplianceBadge compliant={c.compliant_with_change} unknown="no-policy" />
                    </td>
                    <td>
                      {c.reasons.length === 0 ? (
                        <span className="muted">none given</span>
                      ) : (
                        <ul className="plain small">
                          {c.reasons.map((r, i) => (
                            <li key={i}>{r}</li>
                          ))}
                        </ul>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        </div>
      )}
    </section>
  );
}

function PreviewResult({
  org,
  request,
  preview,
}: {
  org: string;
  request: PreviewRequest;
  preview: PolicyPreview;
}) {
  const listed = preview.snapshots.filter(changed);
  const first = preview.snapshots[0];
  const last = preview.snapshots[preview.snapshots.length - 1];
  const { summary } = preview;
  return (
    <section aria-labelledby="preview-result">
      <h3 id="preview-result">What would change in {request.env}</h3>
      <p role="status">
        {request.label}
        {first && last
          ? first.index === last.index
            ? `, over snapshot #${first.index}: `
            : `, over snapshots #${first.index} to #${last.index}: `
          : ': '}
        {summary.flipped_snapshots} of {plural(summary.snapshots, 'snapshot')} would change compliance,{' '}
        {plural(summary.flipped_artifacts, 'artifact')} would flip.
      </p>
      {summary.changes_truncated && (
        <p>
          More changes were found than are listed: the counts above cover them all, the snapshots below list
          the first ones.
        </p>
      )}
      {listed.length === 0 ? (
        <p>Nothing would change: every artifact keeps its compliance in every snapshot previewed.</p>
      ) : (
        listed.map((s) => <SnapshotChanges key={s.index} org={org} env={request.env} s={s} />)
      )}
      {listed.length > 0 && listed.length < preview.snapshots.length && (
        <p className="muted">
          {plural(preview.snapshots.length - listed.length, 'other snapshot')} previewed: nothing would change
          there.
        </p>
      )}
    </section>
  );
}

/** The environment to preview on: the policy's own first, then the organization's first ones. */
function EnvironmentField({ org, attachedTo }: { org: string; attachedTo: string[] }) {
  const environments = useEnvironmentNames(org);
  const suggestions = [
    ...new Set([...attachedTo, ...(environments.data?.environments ?? []).map((e) => e.name)]),
  ];
  return (
    <>
      <Field id="preview-env" label="Environment">
        <input
          id="preview-env"
          name="env"
          required
          maxLength={256}
          list="preview-env-names"
          defaultValue={attachedTo[0] ?? ''}
          autoComplete="off"
        />
      </Field>
      <datalist id="preview-env-names">
        {suggestions.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
    </>
  );
}

/** Attach the version shown, or detach the policy. */
function ChangeChoice({
  policy,
  version,
  mode,
  setMode,
}: {
  policy: string;
  version: number;
  mode: 'attach' | 'detach';
  setMode: (mode: 'attach' | 'detach') => void;
}) {
  return (
    <fieldset className="choice">
      <legend>Change</legend>
      <label>
        <input
          type="radio"
          name="mode"
          value="attach"
          checked={mode === 'attach'}
          onChange={() => setMode('attach')}
        />{' '}
        Attach v{version} (the version shown)
      </label>
      <label>
        <input
          type="radio"
          name="mode"
          value="detach"
          checked={mode === 'detach'}
          onChange={() => setMode('detach')}
        />{' '}
        Detach {policy}
      </label>
    </fieldset>
  );
}

/** The preview form and its answer. */
export function PreviewForm({
  org,
  policy,
  version,
  yaml,
  attachedTo,
}: {
  org: string;
  policy: string;
  version: number;
  yaml: string;
  attachedTo: string[];
}) {
  const preview = usePreview(org);
  const [mode, setMode] = useState<'attach' | 'detach'>('attach');
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const last = Math.min(
      MAX_PREVIEW_SNAPSHOTS,
      Math.max(1, Math.floor(Number(formText(form, 'last')) || 1)),
    );
    preview.mutate({
      env: formText(form, 'env'),
      label: mode === 'attach' ? `Attaching ${policy} v${version}` : `Detaching ${policy}`,
      change: mode === 'attach' ? { attach: { name: policy, content: yaml } } : { detach: policy },
      last,
    });
  };
  return (
    <>
      <form className="filters" onSubmit={onSubmit} aria-label="Preview on an environment">
        <EnvironmentField org={org} attachedTo={attachedTo} />
        <ChangeChoice policy={policy} version={version} mode={mode} setMode={setMode} />
        <Field id="preview-last" label={`Snapshots, back from the latest (1 to ${MAX_PREVIEW_SNAPSHOTS})`}>
          <input
            id="preview-last"
            name="last"
            type="number"
            min={1}
            max={MAX_PREVIEW_SNAPSHOTS}
            defaultValue={1}
            required
          />
        </Field>
        <button type="submit" disabled={preview.isPending}>
          Preview
        </button>
      </form>
      <p className="muted small">
        A preview changes nothing: it judges the evidence as it stands now, under the policies each snapshot
        applied and with this change.
      </p>
      {preview.isPending && (
        <p role="status" className="muted">
          Previewing…
        </p>
      )}
      {preview.error && <ErrorMessage error={preview.error} what="the preview" />}
      {preview.data && !preview.isPending && (
        <PreviewResult org={org} request={preview.data.request} preview={preview.data.preview} />
      )}
    </>
  );
}
