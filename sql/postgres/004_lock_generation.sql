-- Fencing for the warehouse lock: every exclusive taker increments `generation`, and
-- each write transaction checks that the generation it saw is still current (and that its
-- connection still holds the advisory lock) before it commits. The row is no longer deleted on
-- unlock: it carries the generation from holder to holder.
ALTER TABLE geo.sync_lock ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;
