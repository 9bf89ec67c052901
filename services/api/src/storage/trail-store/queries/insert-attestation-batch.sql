-- The statement trailStore.insertAttestationBatch sends for a batch to one organization, as
-- test/unit/trail-store-sql.test.ts compiles it. Do not edit: refresh it with
--   UPDATE_SQL_SNAPSHOTS=1 npx vitest run --project unit test/unit/trail-store-sql.test.ts
with v as (
      select * from jsonb_to_recordset($1::jsonb) as v(org_id text,
        trail_id text, version text, flow_version text, flow_names jsonb, compliance jsonb,
        compliance_state text, evaluated_at timestamptz, last_modified_at timestamptz, facts_last_id text,
        facts jsonb, artifacts jsonb, marks jsonb, marked_at timestamptz)
    ), tr as (
      update trails t set compliance = v.compliance, compliance_state = v.compliance_state,
        evaluated_at = v.evaluated_at, last_modified_at = v.last_modified_at
      from v
      -- The trails by key as well as by join: the join alone, planned for the 100 rows a record
      -- set is assumed to hold, reads the whole trails table while it is small enough.
      where "t"."org_id" = $2 and t.id = any($3::text[])
        and t.org_id = v.org_id and t.id = v.trail_id and (v.version is null or (
        t.xmin::text = v.version
        -- A scalar subquery, probed by key: an exists here is planned as a hash of every flow.
        and (select f.xmin::text from flows f where f.org_id = t.org_id and f.id = t.flow_id) = v.flow_version
        and not exists (select 1 from jsonb_array_elements_text(v.flow_names) n(name)
          where (
  select id from (
    select id, 0 as p from flows where org_id = "t"."org_id" and name = "n"."name"
    union all
    select flow_id, 1 from flow_aliases where org_id = "t"."org_id" and name = "n"."name"
  ) named order by p limit 1) is distinct from t.flow_id)
        and not exists (select 1 from jsonb_to_recordset(v.artifacts) x(id text, version text)
          left join artifacts a on a.org_id = t.org_id and a.trail_id = t.id and a.id = x.id
          where a.xmin::text is distinct from x.version)))
      returning t.org_id, t.id, t.xmin::text as version
    ), au as (
      update artifacts a set state = x.state,
        compliance = coalesce(x.compliance, v.compliance -> 'artifacts_statuses' -> x.status_key)
      from v join tr on tr.org_id = v.org_id and tr.id = v.trail_id
      cross join jsonb_to_recordset(v.artifacts)
        x(id text, state text, compliance jsonb, status_key text, version text)
      -- By key as well, as the trails above: joined only, it was planned as a scan of the
      -- organization's artifacts for each trail written while the table was small.
      where "a"."org_id" = $4 and a.id = any($5::text[])
        and a.org_id = v.org_id and a.trail_id = v.trail_id and a.id = x.id
        and (x.version is null or a.xmin::text = x.version)
    ), mk as (
      -- One mark per environment where a fingerprint whose compliance changed runs (the rule
      -- markEnvironmentsRunning applies to other evidence changes).
      insert into reevaluation_marks (org_id, id, environment_id, marked_at, reason)
      select m.org_id, substr(gen_random_uuid()::text, 1, 32), m.environment_id, m.marked_at, 'provenance'
      from (select distinct v.org_id, l.environment_id, v.marked_at
        from v join tr on tr.org_id = v.org_id and tr.id = v.trail_id
        cross join jsonb_array_elements_text(v.marks) f(fingerprint)
        join runtime_states l on l.org_id = v.org_id and l.fingerprint = f.fingerprint and l.to_index is null) m
      returning 1
    ), fa as (
      insert into trail_facts (org_id, trail_id, last_id, facts)
      select v.org_id, v.trail_id, v.facts_last_id, v.facts from v
      join tr on tr.org_id = v.org_id and tr.id = v.trail_id
      where v.facts is not null
      on conflict (org_id, trail_id) do update set last_id = excluded.last_id, facts = excluded.facts
    ), ev as (
      insert into trail_events (org_id, trail_id, type, fingerprint, occurred_at, data)
      select e.org_id, e.trail_id, e.type, e.fingerprint, e.occurred_at, e.data
      from jsonb_to_recordset($6::jsonb) as e(ord int, org_id text,
        trail_id text, type text, fingerprint text, occurred_at timestamptz, data jsonb)
      join tr on tr.org_id = e.org_id and tr.id = e.trail_id
      order by e.ord
    ), ins as (
      insert into attestations (org_id, id, flow_id, trail_id, name, type, kind, is_compliant, artifact_fingerprint, target_artifacts, git_commit, payload, description, origin_url, user_data, annotations, external_urls, git_commit_info, repo_info, repo_id, evidence_sha256, evidence_filename, evidence_size, evidence_content_type, created_by, created_at)
      select r.org_id, r.id, r.flow_id, r.trail_id, r.name, r.type, r.kind, r.is_compliant, r.artifact_fingerprint, r.target_artifacts, r.git_commit, r.payload, r.description, r.origin_url, r.user_data, r.annotations, r.external_urls, r.git_commit_info, r.repo_info, r.repo_id, r.evidence_sha256, r.evidence_filename, r.evidence_size, r.evidence_content_type, r.created_by, r.created_at
      from jsonb_to_recordset($7::jsonb) as r(ord int, org_id text, id text, flow_id text, trail_id text, name text, type text, kind text, is_compliant boolean, artifact_fingerprint text, target_artifacts jsonb, git_commit text, payload jsonb, description text, origin_url text, user_data jsonb, annotations jsonb, external_urls jsonb, git_commit_info jsonb, repo_info jsonb, repo_id text, evidence_sha256 text, evidence_filename text, evidence_size bigint, evidence_content_type text, created_by text, created_at timestamptz)
      join tr on tr.org_id = r.org_id and tr.id = r.trail_id
      order by r.ord
    )
    select org_id, id, version, (select count(*)::int from mk) as marks from tr
