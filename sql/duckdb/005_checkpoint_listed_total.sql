-- What the unit's task/results listing reported as its total when the unit was read, so
-- `geo-sync check` can compare it with the executions stored. NULL for units closed before this migration.
ALTER TABLE geo.sync_checkpoints ADD COLUMN listed_total INTEGER;
