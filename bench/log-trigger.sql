-- What the transparency log's queueing trigger costs a single-row attestation insert, in the
-- database alone: 20,000 inserts, one statement each as the CLI's attestations arrive, into a
-- throwaway copy of `attestations` (its columns and indexes), first without the trigger and then
-- with the log's own trigger function (`tlog_attestation_ins`, storage/log-triggers.ts).
-- Run on a database Verity has migrated with the log on, nobody else writing to it:
--   psql -d <database> -f bench/log-trigger.sql
-- Prints the two timings (\timing); the copy and the rows it queued are removed at the end.
\set ON_ERROR_STOP on
set client_min_messages = warning;
drop table if exists bench_log_trigger;
create table bench_log_trigger (like attestations including defaults including identity);
alter table bench_log_trigger add primary key (org_id, id);
create index on bench_log_trigger (org_id, flow_id, created_at);
create index on bench_log_trigger (org_id, seq);
create index on bench_log_trigger (org_id, trail_id, seq);
create function pg_temp.bench_inserts() returns void language plpgsql as $$
begin
  for i in 1..20000 loop
    insert into bench_log_trigger (org_id, id, flow_id, trail_id, name, type, kind, is_compliant,
      artifact_fingerprint, git_commit, payload, created_by, created_at)
    values ('bench-log-trigger', 'att_' || i, 'flw_1', 'trl_' || (i % 64), 'unit-tests', 'junit',
      'attestation', true, md5(i::text) || md5(i::text), md5(i::text),
      '{"tests":120,"failures":0,"errors":0,"skipped":2,"duration":12.5,"suites":[{"name":"a","tests":60},{"name":"b","tests":60}]}',
      'ci-bot', now());
  end loop;
end $$;
\timing on
\echo without the trigger
select pg_temp.bench_inserts();
\timing off
truncate bench_log_trigger;
create trigger bench_log_trigger_ins after insert on bench_log_trigger referencing new table as log_new
  for each statement execute function tlog_attestation_ins();
\timing on
\echo with the log trigger
select pg_temp.bench_inserts();
\timing off
delete from log_queue where org_id = 'bench-log-trigger';
drop table bench_log_trigger;
