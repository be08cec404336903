-- Rank numbers (position, visibility, score) that are not integers of their column: a dash
-- placeholder, a fraction, text, a number beyond the column, JSON that is no number. They are
-- stored as NULL, and the value the API sent is kept here, by field: {"visibility": "-"}. NULL
-- when every number of the item was an integer or empty (src/api/schemas/rank-number.ts).
ALTER TABLE geo.execution_ranks ADD COLUMN raw_values JSONB;

-- A btree entry holds at most about 2,700 bytes, so a longer brand or domain (incompressible
-- text, as the API may send) failed the INSERT of its whole batch ("index row size exceeds btree
-- maximum"). These indexes go. (Releases before migration 011 created hash indexes in their place
-- here; 011 drops those and says why: an insert into one slows with every row stored under its
-- value, and building one on a year of ranks took hours.)
DROP INDEX geo.execution_ranks_brand_idx;
DROP INDEX geo.execution_sources_domain_idx;
