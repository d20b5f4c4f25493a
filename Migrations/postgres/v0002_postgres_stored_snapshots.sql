-- ListStore schema on PostgreSQL, version 2: stored snapshots, as SQLite's v0004_stored_snapshots.
--
-- A stored snapshot is the snapshot document of a list at one version of its retained history (after
-- its base). A commit stores one when the versions or the stage bytes since the newest stored point
-- (stored snapshot or base) pass the limits of `_StoredSnapshotPolicy`; pruning drops those the new base makes
-- useless.
CREATE TABLE stored_snapshot (
    list_id BIGINT NOT NULL REFERENCES list(id),
    version BIGINT NOT NULL,
    snapshot BYTEA NOT NULL,
    PRIMARY KEY (list_id, version)
);

-- The newest stored point of each list (its base or its newest stored snapshot) and the bytes of stages
-- committed since it.
ALTER TABLE list ADD COLUMN snapshot_version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE list ADD COLUMN bytes_since_snapshot BIGINT NOT NULL DEFAULT 0;
UPDATE list SET snapshot_version = base_version,
    bytes_since_snapshot = coalesce((SELECT sum(octet_length(stages)) FROM journal WHERE journal.list_id = list.id), 0);
