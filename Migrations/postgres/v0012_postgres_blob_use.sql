-- ListStore schema on PostgreSQL, version 12 (SQLite's version 16): which blob each list used
-- last and whether its source's contents referred to it, and when an upload under way last sent a
-- part (see SQLite's version 16).
ALTER TABLE list_blob ADD COLUMN used BIGINT NOT NULL DEFAULT 0;

ALTER TABLE list_blob ADD COLUMN from_source BIGINT NOT NULL DEFAULT 0;

UPDATE list_blob SET from_source = 1 WHERE uploaded = 0;

ALTER TABLE blob_upload ADD COLUMN updated_at TEXT NOT NULL DEFAULT '';

UPDATE blob_upload SET updated_at = to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');

CREATE INDEX list_blob_by_use ON list_blob (list_id, used);
