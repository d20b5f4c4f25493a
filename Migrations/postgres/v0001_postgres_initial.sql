-- ListStore schema on PostgreSQL, version 1: what SQLite's v0001_initial, v0002_sync and
-- v0003_offline make, in one file (ListStorePostgres applies it).
--
-- Types: ids and versions are BIGINT; item identifiers, contents, stages and other JSON documents are
-- BYTEA, stored verbatim (an identifier may hold U+0000, which TEXT refuses; canonical JSON bytes
-- come back byte for byte); names, digests, uuids and times (ISO 8601 text, UTC, milliseconds) are
-- TEXT. Each statement ends with a semicolon at the end of a line: the store runs them one by one.

-- One row per store: who this store is. `uuid` is created with the store; `epoch` is bumped when a
-- store is reset or restored; `client_id` is the id this store pushes its local changes under.
CREATE TABLE store (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    uuid TEXT NOT NULL,
    epoch BIGINT NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    client_id TEXT NOT NULL
);

-- One row per named list; writers of a list lock its row (SELECT ... FOR UPDATE). `head_version` is
-- the latest version, `head_digest` its digest. The journal holds the versions after
-- `base_version`; `base_snapshot` is the snapshot document at `base_version` (NULL: the empty list).
CREATE TABLE list (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    head_version BIGINT NOT NULL,
    head_digest TEXT NOT NULL,
    base_version BIGINT NOT NULL DEFAULT 0,
    base_snapshot BYTEA,
    created_at TEXT NOT NULL
);

-- The head snapshot: sections of a list in ascending `position` (positions have gaps).
CREATE TABLE section (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    list_id BIGINT NOT NULL REFERENCES list(id),
    position BIGINT NOT NULL,
    identifier BYTEA NOT NULL,
    content BYTEA NOT NULL,
    content_hash BYTEA NOT NULL
);
CREATE INDEX section_by_position ON section(list_id, position);

-- The head snapshot: elements of a section in ascending `position`.
CREATE TABLE element (
    section_id BIGINT NOT NULL,
    position BIGINT NOT NULL,
    identifier BYTEA NOT NULL,
    content BYTEA NOT NULL,
    content_hash BYTEA NOT NULL,
    PRIMARY KEY (section_id, position)
);

-- The journal: one row per version. `stages` is the JSON array of stage objects from
-- `parent_version` to `version`; a version made by a push names it and carries its conflicts.
CREATE TABLE journal (
    list_id BIGINT NOT NULL REFERENCES list(id),
    version BIGINT NOT NULL,
    parent_version BIGINT NOT NULL,
    committed_at TEXT NOT NULL,
    digest TEXT NOT NULL,
    author TEXT,
    message TEXT,
    section_count BIGINT NOT NULL,
    element_count BIGINT NOT NULL,
    stages BYTEA NOT NULL,
    push_client TEXT,
    push_seq BIGINT,
    conflicts BYTEA,
    PRIMARY KEY (list_id, version)
);

-- Consumers registered on a list, each with the version it acknowledged.
CREATE TABLE consumer (
    list_id BIGINT NOT NULL REFERENCES list(id),
    name TEXT NOT NULL,
    version BIGINT NOT NULL,
    registered_at TEXT NOT NULL,
    acknowledged_at TEXT NOT NULL,
    PRIMARY KEY (list_id, name)
);

-- For a list that replicates a list of another store: its source and the source version its head
-- equals; the next sequence number of a local change, the confirmed state while local changes are
-- pending, and the conflicts of the last push.
CREATE TABLE replica_source (
    list_id BIGINT PRIMARY KEY REFERENCES list(id),
    store_uuid TEXT NOT NULL,
    store_epoch BIGINT NOT NULL,
    list_name TEXT NOT NULL,
    version BIGINT NOT NULL,
    digest TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    next_seq BIGINT NOT NULL DEFAULT 1,
    confirmed BYTEA,
    last_conflicts BYTEA
);

-- A replica's outbox: local changes not yet in its confirmed state, oldest first.
CREATE TABLE outbox (
    list_id BIGINT NOT NULL REFERENCES list(id),
    seq BIGINT NOT NULL,
    intents BYTEA NOT NULL,
    author TEXT,
    message TEXT,
    created_at TEXT NOT NULL,
    local_version BIGINT NOT NULL,
    pushed_version BIGINT,
    PRIMARY KEY (list_id, seq)
);

-- Pushes a source merged, one row per (client, sequence number).
CREATE TABLE push (
    list_id BIGINT NOT NULL REFERENCES list(id),
    client_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    version BIGINT NOT NULL,
    conflicts BYTEA NOT NULL,
    pushed_at TEXT NOT NULL,
    PRIMARY KEY (list_id, client_id, seq)
);
