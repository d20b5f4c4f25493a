-- ListStore schema on PostgreSQL, version 12 (SQLite's version 16): which blob each list used last
-- (see SQLite's version 16).
ALTER TABLE list_blob ADD COLUMN used BIGINT NOT NULL DEFAULT 0;

CREATE INDEX list_blob_by_use ON list_blob (list_id, used);
