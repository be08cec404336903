-- Text and JSON values the run stored changed by the one text rule of both warehouses
-- (src/load/text.ts): U+0000 dropped, a lone UTF-16 surrogate stored as U+FFFD.
-- 0 for runs recorded before this column.
ALTER TABLE geo.sync_runs ADD COLUMN text_values_changed BIGINT DEFAULT 0;
