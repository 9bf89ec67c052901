-- WAL written by 20,000 new rows in statements of 32 into a table of :n rows keyed by
-- (org_id, id), right after a checkpoint, with random ids (`newId` until 2026-11-24) and with
-- ids that start with their time in milliseconds (`newId` since):
--   psql -v n=1000000 -f bench/id-order-wal.sql
-- The first change to an index page after a checkpoint writes the whole page to the WAL:
-- random ids touch a different page of the primary key each, ordered ids the last few.
-- Needs CHECKPOINT rights (a superuser) and a server nobody else writes to (the WAL is the
-- server's); drops its table again.
\set ON_ERROR_STOP on
create table id_order_wal (org_id text not null, id text not null, payload text,
  primary key (org_id, id));
insert into id_order_wal select 'org', md5('seed ' || g), repeat('x', 200)
  from generate_series(1, :n) g;
vacuum analyze id_order_wal;
checkpoint;
select pg_current_wal_lsn() as before_random \gset
do $$ begin for i in 1..625 loop
  insert into id_order_wal select 'org', md5(random()::text), repeat('x', 200)
    from generate_series(1, 32);
end loop; end $$;
select pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), :'before_random')) as "WAL, random ids";
checkpoint;
select pg_current_wal_lsn() as before_ordered \gset
do $$ begin for i in 1..625 loop
  insert into id_order_wal
    select 'org', lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint), 12, '0')
                  || substr(md5(random()::text), 1, 20), repeat('x', 200)
      from generate_series(1, 32);
end loop; end $$;
select pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), :'before_ordered')) as "WAL, ordered ids";
select pg_size_pretty(pg_relation_size('id_order_wal_pkey')) as "primary key size";
drop table id_order_wal;
