-- ListStore schema on PostgreSQL, version 10 (SQLite's version 14): a paged sync's pages land as
-- rows of a staging list, `staged_record` goes, `staged_sync.entry_bytes` comes (see SQLite's
-- version 14).
DELETE FROM staged_sync;
DROP TABLE staged_record;
ALTER TABLE staged_sync ADD COLUMN entry_bytes BIGINT NOT NULL DEFAULT 0;
