-- Monitoring tasks the key may not read, as the run found them when it resolved its scope
-- (project_id and the reason): a run that synced "everything" can be seen to have left some out.
-- NULL for runs that resolve no scope (distributed jobs) and for runs recorded before this column.
ALTER TABLE geo.sync_runs ADD COLUMN unreadable JSON;
