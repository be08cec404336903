-- Change detection: per execution, the fingerprint of its task/results item as last
-- read (sha256 of the item's canonical JSON, unknown members included) and whether its children
-- were then read completely (nothing unread, nothing quarantined). A later run skips the children
-- of an execution whose listed item is unchanged and whose children were complete. A row is
-- written with its execution's rows and deleted with them.
CREATE TABLE geo.execution_fingerprints (
  prompt_task_id    BIGINT NOT NULL,
  fingerprint       TEXT NOT NULL,
  children_complete BOOLEAN NOT NULL,
  synced_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (prompt_task_id)
);
-- Executions a run read (children requested) and found unchanged (not re-read). NULL for runs
-- recorded before these columns.
ALTER TABLE geo.sync_runs ADD COLUMN executions_read BIGINT;
ALTER TABLE geo.sync_runs ADD COLUMN executions_unchanged BIGINT;
