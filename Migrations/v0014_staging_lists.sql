-- ListStore schema, version 14: a paged sync's pages land as rows (ListStoreCore's article "Lists of
-- Any Size"). Each page of a first sync or resync is written, in its own transaction, as sections
-- and elements of a staging list: a row of `list` named U+0001 "staging" U+0001 and the replica
-- list's name (no user's list name holds U+0001, and listings leave such lists out). The last
-- transaction makes those rows the list's, so no row is written twice; `staged_record` goes.
-- `staged_sync.entry_bytes` counts the bytes of the journal entry the landed records make, so that
-- the last transaction writes the entry in one read of the rows. Syncs under way when a store is
-- migrated start again at their next pull.
DELETE FROM staged_sync;
DROP TABLE staged_record;
ALTER TABLE staged_sync ADD COLUMN entry_bytes INTEGER NOT NULL DEFAULT 0;
