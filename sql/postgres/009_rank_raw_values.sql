-- Rank numbers (position, visibility, score) that are not integers of their column: a dash
-- placeholder, a fraction, text, a number beyond the column, JSON that is no number. They are
-- stored as NULL, and the value the API sent is kept here, by field: {"visibility": "-"}. NULL
-- when every number of the item was an integer or empty (src/api/schemas/rank-number.ts).
ALTER TABLE geo.execution_ranks ADD COLUMN raw_values JSONB;

-- Free text from the API indexed for equality lookups: a btree entry holds at most about 2,700
-- bytes, so a longer brand or domain (incompressible text, as the API may send) failed the INSERT
-- of its whole batch ("index row size exceeds btree maximum"). A hash index stores a 4-byte hash
-- of any length of text and serves the same `brand = ...` / `domain = ...` lookups.
DROP INDEX geo.execution_ranks_brand_idx;
CREATE INDEX execution_ranks_brand_idx ON geo.execution_ranks USING hash (brand);
DROP INDEX geo.execution_sources_domain_idx;
CREATE INDEX execution_sources_domain_idx ON geo.execution_sources USING hash (domain);
