-- ListStore schema on PostgreSQL, version 9 (SQLite's version 11): first syncs and resyncs in
-- pages. A replica list's pages land in `staged_record`, each in its own transaction, and become the
-- replica in one transaction when the last has landed (see SQLite's version 11).
CREATE TABLE staged_sync (
    list_name TEXT PRIMARY KEY,
    store_uuid TEXT NOT NULL,
    store_epoch BIGINT NOT NULL,
    source_list TEXT NOT NULL,
    list_uid TEXT,
    version BIGINT NOT NULL,
    digest TEXT NOT NULL,
    section_count BIGINT NOT NULL,
    element_count BIGINT NOT NULL,
    next_cursor TEXT,
    records BIGINT NOT NULL,
    elements BIGINT NOT NULL,
    bytes BIGINT NOT NULL,
    reason TEXT NOT NULL,
    started_at TEXT NOT NULL
);
CREATE TABLE staged_record (
    list_name TEXT NOT NULL,
    seq BIGINT NOT NULL,
    is_section BIGINT NOT NULL,
    identifier BYTEA NOT NULL,
    content BYTEA NOT NULL,
    PRIMARY KEY (list_name, seq)
);
