-- ListStore schema on PostgreSQL, version 12 (SQLite's version 16): which blob each list used
-- last, and when an upload under way last sent a part (see SQLite's version 16).
ALTER TABLE list_blob ADD COLUMN used BIGINT NOT NULL DEFAULT 0;

ALTER TABLE blob_upload ADD COLUMN updated_at TEXT NOT NULL DEFAULT '';

CREATE INDEX list_blob_by_use ON list_blob (list_id, used);
