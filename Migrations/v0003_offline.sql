-- ListStore schema, version 3: offline writes on replicas and pushes (ListMerge's article
-- “Offline writes and conflicts”).
--
-- The id this store pushes its local changes under, with a sequence number per list. A new one is
-- made whenever the epoch advances (a store restored from a backup must not reuse sequence numbers
-- that a source already recorded for other changes).
ALTER TABLE store ADD COLUMN client_id TEXT;
UPDATE store SET client_id = lower(
    hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
    substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)));

-- For a replica list: the next sequence number of a local change, the confirmed state (the snapshot
-- document of the source version in `version`) while local changes are pending (NULL when the head
-- equals it), and the conflicts the source reported for the last push.
ALTER TABLE replica_source ADD COLUMN next_seq INTEGER NOT NULL DEFAULT 1;
ALTER TABLE replica_source ADD COLUMN confirmed TEXT;
ALTER TABLE replica_source ADD COLUMN last_conflicts TEXT;

-- A replica's outbox: local changes not yet in its confirmed state, oldest first. `intents` is the
-- JSON array of the change's intents; `pushed_version` the source version a push was recorded as.
CREATE TABLE outbox (
    list_id INTEGER NOT NULL REFERENCES list(id),
    seq INTEGER NOT NULL,
    intents TEXT NOT NULL,
    author TEXT,
    message TEXT,
    created_at TEXT NOT NULL,
    local_version INTEGER NOT NULL,
    pushed_version INTEGER,
    PRIMARY KEY (list_id, seq)
) WITHOUT ROWID;

-- Pushes a source merged, one row per (client, sequence number), written in the transaction of the
-- version it made (or of nothing, when the merge changed nothing): a push seen again is answered
-- from here and applies nothing.
CREATE TABLE push (
    list_id INTEGER NOT NULL REFERENCES list(id),
    client_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    version INTEGER NOT NULL,
    conflicts TEXT NOT NULL,
    pushed_at TEXT NOT NULL,
    PRIMARY KEY (list_id, client_id, seq)
) WITHOUT ROWID;

-- A journal entry made by a push names it, and carries the conflicts of its merge.
ALTER TABLE journal ADD COLUMN push_client TEXT;
ALTER TABLE journal ADD COLUMN push_seq INTEGER;
ALTER TABLE journal ADD COLUMN conflicts TEXT;
