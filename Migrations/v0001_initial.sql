-- ListStore schema, version 1.
--
-- One row per store: who this store is. `uuid` is created with the store; `epoch` is bumped when a
-- store is reset or restored, so that a consumer can tell it is looking at a different history.
CREATE TABLE store (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    uuid TEXT NOT NULL,
    epoch INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL
);

-- One row per named list. `head_version` is the latest version (1, 2, 3, ...); `head_digest` its
-- digest. The journal holds the versions after `base_version`; `base_snapshot` is the snapshot
-- document at `base_version` (NULL: the empty list, at version 0).
CREATE TABLE list (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    head_version INTEGER NOT NULL,
    head_digest TEXT NOT NULL,
    base_version INTEGER NOT NULL DEFAULT 0,
    base_snapshot TEXT,
    created_at TEXT NOT NULL
);

-- The head snapshot: sections of a list in ascending `position` (positions have gaps, so that an
-- insertion or a move rewrites one row, not the rows after it).
CREATE TABLE section (
    id INTEGER PRIMARY KEY,
    list_id INTEGER NOT NULL REFERENCES list(id),
    position INTEGER NOT NULL,
    identifier TEXT NOT NULL,
    content TEXT NOT NULL,
    content_hash BLOB NOT NULL
);
CREATE INDEX section_by_position ON section(list_id, position);

-- The head snapshot: elements of a section in ascending `position`.
CREATE TABLE element (
    section_id INTEGER NOT NULL,
    position INTEGER NOT NULL,
    identifier TEXT NOT NULL,
    content TEXT NOT NULL,
    content_hash BLOB NOT NULL,
    PRIMARY KEY (section_id, position)
) WITHOUT ROWID;

-- The journal: one row per version. `stages` is a JSON array of stage objects (the staged changeset
-- from `parent_version` to `version`, with the content of inserted and updated items).
CREATE TABLE journal (
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
    PRIMARY KEY (list_id, version)
) WITHOUT ROWID;
