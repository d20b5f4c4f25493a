-- ListStore schema, version 2: what consumers and replicas need.
--
-- Consumers registered on a list, each with the version it acknowledged. Pruning keeps the journal
-- after the lowest acknowledged version of a list's consumers (unless forced).
CREATE TABLE consumer (
    list_id INTEGER NOT NULL REFERENCES list(id),
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    registered_at TEXT NOT NULL,
    acknowledged_at TEXT NOT NULL,
    PRIMARY KEY (list_id, name)
) WITHOUT ROWID;

-- For a list that replicates a list of another store: which store (uuid, epoch), which list, and the
-- source version and digest the replica's head equals. Written in the same transaction as the rows.
CREATE TABLE replica_source (
    list_id INTEGER PRIMARY KEY REFERENCES list(id),
    store_uuid TEXT NOT NULL,
    store_epoch INTEGER NOT NULL,
    list_name TEXT NOT NULL,
    version INTEGER NOT NULL,
    digest TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
