-- ListStore schema, version 12: the journal and the stored snapshots in rowid tables.
--
-- Their rows can be large: a commit of a million elements, or a replica's first sync of such a list,
-- journals about 100 MB of stages, and a stored snapshot holds a whole list. In a WITHOUT ROWID table
-- a row is a key of its b-tree, and SQLite reads the whole payload of a key that overflows its page to
-- compare another key with it: every commit whose journal row landed next to a large entry read that
-- entry whole (100 MB of memory and I/O for a one-element change). In a rowid table the key
-- (list_id, version) is a small entry of the primary key's index, beside the row.
CREATE TABLE journal_v12 (
    list_id INTEGER NOT NULL REFERENCES list(id),
    version INTEGER NOT NULL,
    parent_version INTEGER NOT NULL,
    committed_at TEXT NOT NULL,
    digest TEXT NOT NULL,
    author TEXT,
    message TEXT,
    section_count INTEGER NOT NULL,
    element_count INTEGER NOT NULL,
    stages TEXT NOT NULL,
    push_client TEXT,
    push_seq INTEGER,
    conflicts TEXT,
    PRIMARY KEY (list_id, version)
);
INSERT INTO journal_v12 (list_id, version, parent_version, committed_at, digest, author, message, section_count,
    element_count, stages, push_client, push_seq, conflicts)
SELECT list_id, version, parent_version, committed_at, digest, author, message, section_count, element_count, stages,
    push_client, push_seq, conflicts
FROM journal ORDER BY list_id, version;
DROP TABLE journal;
ALTER TABLE journal_v12 RENAME TO journal;

CREATE TABLE stored_snapshot_v12 (
    list_id INTEGER NOT NULL REFERENCES list(id),
    version INTEGER NOT NULL,
    snapshot TEXT NOT NULL,
    PRIMARY KEY (list_id, version)
);
INSERT INTO stored_snapshot_v12 (list_id, version, snapshot)
SELECT list_id, version, snapshot FROM stored_snapshot ORDER BY list_id, version;
DROP TABLE stored_snapshot;
ALTER TABLE stored_snapshot_v12 RENAME TO stored_snapshot;
