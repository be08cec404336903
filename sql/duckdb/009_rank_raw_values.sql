-- Rank numbers (position, visibility, score) that are not integers of their column: a dash
-- placeholder, a fraction, text, a number beyond the column, JSON that is no number. They are
-- stored as NULL, and the value the API sent is kept here, by field: {"visibility": "-"}. NULL
-- when every number of the item was an integer or empty (src/api/schemas/rank-number.ts).
-- (DuckDB has no secondary indexes here, so no key length to mind: see 001_init.sql.)
ALTER TABLE geo.execution_ranks ADD COLUMN raw_values JSON;
