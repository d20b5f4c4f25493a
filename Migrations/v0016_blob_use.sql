-- ListStore schema, version 16: which blob each list used last (`list_blob.used`, a number that
-- grows with each use in the list: the end of an upload or a fetch, a fetch of a blob it holds) and
-- whether its source's contents referred to it (`list_blob.from_source`: a replica list's blobs
-- its source has; those it had by reference before did), so that a replica keeps the bytes of its
-- source's blobs as a cache of a bounded size, dropping the bytes it used longest ago first
-- (ListSync's `Replica.trimBlobCache(to:)`); and when an upload under way last sent a part
-- (`blob_upload.updated_at`, ISO 8601 UTC; the migration's time for uploads begun before), so that
-- a prune gives up the uploads of its list that sent nothing for a week.
ALTER TABLE list_blob ADD COLUMN used INTEGER NOT NULL DEFAULT 0;

ALTER TABLE list_blob ADD COLUMN from_source INTEGER NOT NULL DEFAULT 0;

UPDATE list_blob SET from_source = 1 WHERE uploaded = 0;

ALTER TABLE blob_upload ADD COLUMN updated_at TEXT NOT NULL DEFAULT '';

UPDATE blob_upload SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');

CREATE INDEX list_blob_by_use ON list_blob (list_id, used);
