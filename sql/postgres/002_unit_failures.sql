-- Units (platform task, day) whose last attempt failed: no checkpoint was written for that
-- attempt. `geo-sync state show` reports them; the next run redoes them like any unit without a
-- checkpoint. One row per unit, the latest failure.
CREATE TABLE geo.sync_unit_failures (
  task_id   BIGINT NOT NULL,
  date      DATE NOT NULL,
  run_id    TEXT NOT NULL,
  failed_at TIMESTAMPTZ NOT NULL,
  error     TEXT NOT NULL,
  PRIMARY KEY (task_id, date)
);
