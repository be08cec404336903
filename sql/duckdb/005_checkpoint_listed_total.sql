-- What the unit's task/results listing reported as its total when the unit was read, so
-- `geo-sync check` can compare it with the executions stored (issue 22). NULL for older units.
ALTER TABLE geo.sync_checkpoints ADD COLUMN listed_total INTEGER;
