-- Freshness: when the last successful run that synced its whole scope finished (NULL: never).
-- Counted: kind sync, backfill, schedule or demo (the demo syncs its simulator's days into its
-- warehouse); not diagnose, which reads site diagnoses only.
-- Not counted: a distributed job attempt (args has "job"), which reads one unit only, and a
-- distributed backfill's enqueue (args phase 'enqueue'), which only queues the work: neither
-- says the warehouse is up to date.
SELECT max(finished_at) AS last_success FROM geo.sync_runs
WHERE status = 'success'
  AND kind IN ('sync', 'backfill', 'schedule', 'demo')
  AND (args -> 'job') IS NULL
  AND COALESCE(args ->> 'phase', '') <> 'enqueue'
