-- ListStore schema on PostgreSQL, version 11 (SQLite's version 15): attachments' bytes in parts,
-- the uploads under way, and the blobs each list has (see SQLite's version 15).
CREATE TABLE blob (
    hash BYTEA PRIMARY KEY,
    size BIGINT NOT NULL,
    whole BIGINT NOT NULL
);

CREATE TABLE blob_part (
    hash BYTEA NOT NULL,
    start BIGINT NOT NULL,
    bytes BYTEA NOT NULL,
    PRIMARY KEY (hash, start)
);

CREATE TABLE blob_upload (
    list_id BIGINT NOT NULL REFERENCES list(id),
    hash BYTEA NOT NULL,
    received BIGINT NOT NULL,
    PRIMARY KEY (list_id, hash)
);

CREATE TABLE list_blob (
    list_id BIGINT NOT NULL REFERENCES list(id),
    hash BYTEA NOT NULL,
    uploaded BIGINT NOT NULL,
    PRIMARY KEY (list_id, hash)
);

CREATE INDEX list_blob_by_hash ON list_blob (hash);
