-- ListStore schema, version 15: attachments (ListStoreCore's article "Attachments"). A blob's bytes
-- are kept once per store, whatever lists have it, in parts of 1 MiB (`blob_part`, by the blob's
-- SHA-256 and the part's first byte), each written once, in a transaction of its own: an upload
-- holds one part in memory. `blob.whole` is set once the bytes of every part were read back to the
-- blob's hash. `blob_upload` counts, for each list, the bytes its upload under way sent (an upload
-- resumes there, and a list has a blob only once its own upload sent every byte). `list_blob` holds
-- the blobs each list has: uploaded to it (`uploaded` 1: it reads them), or referenced by a content
-- its source sent a replica list (0: the bytes are at the source until they are uploaded to it).
CREATE TABLE blob (
    hash BLOB PRIMARY KEY,
    size INTEGER NOT NULL,
    whole INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE blob_part (
    hash BLOB NOT NULL,
    start INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (hash, start)
);

CREATE TABLE blob_upload (
    list_id INTEGER NOT NULL REFERENCES list(id),
    hash BLOB NOT NULL,
    received INTEGER NOT NULL,
    PRIMARY KEY (list_id, hash)
) WITHOUT ROWID;

CREATE TABLE list_blob (
    list_id INTEGER NOT NULL REFERENCES list(id),
    hash BLOB NOT NULL,
    uploaded INTEGER NOT NULL,
    PRIMARY KEY (list_id, hash)
) WITHOUT ROWID;

CREATE INDEX list_blob_by_hash ON list_blob (hash);
