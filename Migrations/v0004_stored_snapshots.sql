-- ListStore schema, version 4: stored snapshots, so that time travel costs the distance to the nearest
-- stored snapshot and never the whole history (ListStore's article “History and retention”).
--
-- A stored snapshot is the snapshot document of a list at one version of its retained history (after
-- its base). A commit stores one when the versions or the stage bytes since the newest stored point
-- (stored snapshot or base) pass the limits of `_StoredSnapshotPolicy`; pruning drops those the new base makes
-- useless.
CREATE TABLE stored_snapshot (
    list_id INTEGER NOT NULL REFERENCES list(id),
    version INTEGER NOT NULL,
    snapshot TEXT NOT NULL,
    PRIMARY KEY (list_id, version)
) WITHOUT ROWID;

-- The newest stored point of each list (its base or its newest stored snapshot) and the bytes of stages
-- committed since it.
ALTER TABLE list ADD COLUMN snapshot_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE list ADD COLUMN bytes_since_snapshot INTEGER NOT NULL DEFAULT 0;
UPDATE list SET snapshot_version = base_version,
    bytes_since_snapshot = coalesce((SELECT sum(length(CAST(stages AS BLOB))) FROM journal WHERE journal.list_id = list.id), 0);
