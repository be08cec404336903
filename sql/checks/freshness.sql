-- Freshness: when the last successful run finished (NULL: never).
SELECT max(finished_at) AS last_success FROM geo.sync_runs WHERE status = 'success'
