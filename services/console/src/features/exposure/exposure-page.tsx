/**
 * `/{org}/exposure?purl=` (or `fingerprint=`, `commit=`; optional `from`, `to`): which artifacts
 * contained a package, and where and when they ran, with each environment's compliance then.
 */
import { useState, type FormEvent } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { Fact } from '../../components/facts';
import { ErrorMessage, Loading } from '../../components/query-state';
import { ApiError } from '../../lib/api-client';
import type { ExposureArtifact } from '../../lib/contract';
import { paths, plural, short } from '../../lib/format';
import { zoneChoice } from '../../lib/preferences';
import { formText } from '../../lib/form';
import { useExposure, type ExposureParams } from './api';
import { ExposureTimeline, timeAxis, type TimeAxis } from './exposure-timeline';
import { Field } from '../../components/field';

const EXAMPLE = 'pkg:npm/lodash@4.17.20';
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A `from`/`to` of the page's address as the API reads it: a date is midnight (or the day's end) in
 * the zone the page shows times in.
 */
function apiTime(value: string, end: boolean): string {
  if (!DAY.test(value)) {
    return value;
  }
  const d = new Date(`${value}T${end ? '23:59:59.999' : '00:00:00'}${zoneChoice() === 'utc' ? 'Z' : ''}`);
  return Number.isNaN(d.getTime()) ? value : d.toISOString();
}

/** What the form looks an artifact up by, with its field's label and example. */
const KINDS = {
  purl: { label: 'Package URL', placeholder: EXAMPLE },
  fingerprint: { label: 'Fingerprint (SHA-256, or its first characters)', placeholder: 'e3b0c44298fc…' },
  commit: { label: 'Git commit', placeholder: '1a2b3c4d5e6f…' },
} as const;
type Kind = keyof typeof KINDS;

function ExposureForm({
  page,
  badRequest,
  setParams,
}: {
  page: ExposureParams;
  badRequest: ApiError | null;
  setParams: (params: Record<string, string>) => void;
}) {
  const asked: Kind = page.fingerprint ? 'fingerprint' : page.commit ? 'commit' : 'purl';
  const [kind, setKind] = useState<Kind>(asked);
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const next: Record<string, string> = {};
    const value = formText(form, 'value');
    if (value) {
      next[kind] = value;
    }
    for (const k of ['from', 'to']) {
      const v = formText(form, k);
      if (v) {
        next[k] = v;
      }
    }
    setParams(next);
  };
  return (
    <form onSubmit={onSubmit} className="filters" aria-label="Which of our environments ran a package">
      <Field id="exposure-kind" label="Look up by">
        <select id="exposure-kind" value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
          <option value="purl">package URL</option>
          <option value="fingerprint">artifact fingerprint</option>
          <option value="commit">git commit</option>
        </select>
      </Field>
      <Field id="exposure-value" label={KINDS[kind].label} wide>
        <input
          id="exposure-value"
          name="value"
          type="text"
          defaultValue={page[asked]}
          key={`${asked}:${page[asked]}`}
          placeholder={KINDS[kind].placeholder}
          spellCheck={false}
          autoComplete="off"
          aria-invalid={badRequest ? true : undefined}
          aria-describedby={badRequest ? 'exposure-value-error' : undefined}
        />
        {badRequest && (
          <p id="exposure-value-error" role="alert" className="field-error">
            {badRequest.message}
          </p>
        )}
      </Field>
      <Field id="exposure-from" label="From (optional)">
        <input id="exposure-from" name="from" type="date" defaultValue={page.from} key={`f${page.from}`} />
      </Field>
      <Field id="exposure-to" label="To (optional)">
        <input id="exposure-to" name="to" type="date" defaultValue={page.to} key={`t${page.to}`} />
      </Field>
      <button type="submit">Show exposure</button>
    </form>
  );
}

function AboutExposure({ org }: { org: string }) {
  return (
    <section className="empty" aria-labelledby="exposure-about">
      <h2 id="exposure-about">Which of our environments ran a package?</h2>
      <p>
        Enter a package URL (purl) to find every artifact whose SBOM contained it, and where and when each one
        ran, with the environment&apos;s compliance over each interval. Leave out the version to match every
        version; pick dates to look at a window of time only.
      </p>
      <p>
        For example <Link to={paths.exposure(org, EXAMPLE)}>{EXAMPLE}</Link> or{' '}
        <code>pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1</code>. SBOMs are read from attested
        CycloneDX or SPDX JSON evidence.
      </p>
    </section>
  );
}

export default function ExposurePage() {
  const { org = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const get = (k: string) => (params.get(k) ?? '').trim();
  const page: ExposureParams = {
    purl: get('purl'),
    fingerprint: get('fingerprint'),
    commit: get('commit'),
    from: get('from'),
    to: get('to'),
  };
  const query = useExposure(org, { ...page, from: apiTime(page.from, false), to: apiTime(page.to, true) });
  // "now" of the picture: fixed per answer, so running bars do not move on every render
  const [now] = useState(() => Date.now() / 1000);
  const asked = page.purl || page.fingerprint || page.commit;
  const badRequest = query.error instanceof ApiError && query.error.status === 400 ? query.error : null;

  const what = page.purl
    ? page.purl
    : page.fingerprint
      ? `fingerprint ${short(page.fingerprint, 16)}`
      : `commit ${short(page.commit, 10)}`;

  return (
    <>
      <title>{`Exposure${asked ? ` ${what}` : ''} · Verity`}</title>
      <h1>Exposure</h1>
      <ExposureForm page={page} badRequest={badRequest} setParams={setParams} />
      {!asked ? (
        <AboutExposure org={org} />
      ) : badRequest ? null : query.error ? (
        <ErrorMessage error={query.error} what="the exposure" onRetry={query.refetch} />
      ) : query.isPending || !query.data ? (
        <Loading what="the exposure" />
      ) : (
        <Answer
          org={org}
          what={what}
          byPackage={Boolean(page.purl)}
          artifacts={query.data.artifacts}
          truncated={query.data.truncated}
          axis={timeAxis(query.data.artifacts, now, query.data.query.from, query.data.query.to)}
          now={now}
        />
      )}
    </>
  );
}

/** One artifact that contained the package: its facts, matching components, and where it ran. */
function ArtifactExposure({
  org,
  a,
  axis,
  now,
}: {
  org: string;
  a: ExposureArtifact;
  axis: TimeAxis;
  now: number;
}) {
  return (
    <section aria-labelledby={`exposure-${a.fingerprint}-${a.trail}`}>
      <h2 id={`exposure-${a.fingerprint}-${a.trail}`}>
        <Link to={paths.artifact(org, a.flow, a.fingerprint)}>{a.name}</Link>
      </h2>
      <dl className="facts">
        <Fact term="Fingerprint">
          <code title={a.fingerprint}>{short(a.fingerprint, 12)}</code>
        </Fact>
        <Fact term="Flow">
          <Link to={paths.flow(org, a.flow)}>{a.flow}</Link>
        </Fact>
        <Fact term="Trail">
          <Link to={paths.trail(org, a.flow, a.trail)}>{a.trail}</Link>
        </Fact>
        <Fact term="Commit">{a.commit ? <code>{short(a.commit, 10)}</code> : 'none'}</Fact>
      </dl>
      {a.components.length > 0 && (
        <ul className="components">
          {a.components.map((c) => (
            <li key={`${c.attestation_id}-${c.purl}`}>
              <code>{c.purl}</code> · version {c.version ?? 'any'} · from{' '}
              <Link to={paths.trail(org, a.flow, a.trail)}>{c.attestation_name}</Link>
            </li>
          ))}
        </ul>
      )}
      {a.environments.length === 0 ? (
        <p>It ran in no environment over this time.</p>
      ) : (
        <ExposureTimeline org={org} artifact={a} axis={axis} now={now} />
      )}
    </section>
  );
}

function Answer({
  org,
  what,
  byPackage,
  artifacts,
  truncated,
  axis,
  now,
}: {
  org: string;
  what: string;
  /** Asked by package (else by fingerprint or commit): how the answer is worded. */
  byPackage: boolean;
  artifacts: ExposureArtifact[];
  truncated: boolean;
  axis: TimeAxis;
  now: number;
}) {
  if (artifacts.length === 0) {
    return (
      <section aria-labelledby="exposure-none" className="empty">
        <h2 id="exposure-none">
          {byPackage ? `Nothing we ran contained ${what}` : `No artifact has ${what}`}
        </h2>
        <p>
          {byPackage
            ? 'No artifact of this organization has it in an attested SBOM.'
            : 'No artifact of this organization matches it.'}
        </p>
      </section>
    );
  }
  return (
    <>
      <p aria-live="polite">
        {byPackage
          ? `${plural(artifacts.length, 'artifact')} contained ${what}`
          : `${plural(artifacts.length, 'artifact')} with ${what}`}
        {truncated && ' (the first ones only: narrow the query to see the rest)'}.
      </p>
      {artifacts.map((a) => (
        <ArtifactExposure
          key={`${a.flow}-${a.trail}-${a.fingerprint}`}
          org={org}
          a={a}
          axis={axis}
          now={now}
        />
      ))}
    </>
  );
}
