-- ListStore schema on PostgreSQL, version 10 (SQLite's version 14): a paged sync's pages land as
-- rows of a staging list, `staged_record` goes (see SQLite's version 14).
DELETE FROM staged_sync;
DROP TABLE staged_record;
