-- The batch statement's trail update against a trails table of :n rows, joined by record set
-- alone and also named by key (attestationsRepository.insertAttestationBatch):
--   psql -v n=1000 -f bench/trail-scan.sql
-- Runs in a temporary table of its own and changes nothing else.
create temp table trails_x (org_id text, id text, flow_id text, compliance jsonb, pad text,
  primary key (org_id, id));
insert into trails_x select 'org', 'trail-' || g, 'flow', '{"a":1}', repeat('x', 600)
  from generate_series(1, :n) g;
analyze trails_x;
\set recs '[{"org_id":"org","trail_id":"trail-1","c":{}},{"org_id":"org","trail_id":"trail-2","c":{}},{"org_id":"org","trail_id":"trail-3","c":{}},{"org_id":"org","trail_id":"trail-4","c":{}}]'
begin;
explain (analyze, costs off) update trails_x t set compliance = v.c
  from jsonb_to_recordset(:'recs'::jsonb) v(org_id text, trail_id text, c jsonb)
  where t.org_id = v.org_id and t.id = v.trail_id;
explain (analyze, costs off) update trails_x t set compliance = v.c
  from jsonb_to_recordset(:'recs'::jsonb) v(org_id text, trail_id text, c jsonb)
  where t.org_id = any('{org}'::text[]) and t.id = any('{trail-1,trail-2,trail-3,trail-4}'::text[])
    and t.org_id = v.org_id and t.id = v.trail_id;
rollback;
