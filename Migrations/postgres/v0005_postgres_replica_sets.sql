-- ListStore schema on PostgreSQL, version 5 (SQLite's version 7): replica sets (ListSync's article
-- "Replica Sets"). A replica store that follows a set of lists (a pattern) over the source's feed
-- keeps one cursor for the set, written in the same transaction as each commit or deletion it
-- applies, so that a follower killed at any instant resumes with nothing doubled or skipped.
--
-- `pattern` is the set's pattern of list names; `store_uuid` and `store_epoch` the source store's
-- identity, `position` the source feed's position applied up to; `last_conflicts` the changes the
-- last pulls could not keep (a JSON object from list name to conflict report: pending changes to
-- lists the source deleted), until the next such report.
CREATE TABLE replica_set (
    pattern TEXT PRIMARY KEY,
    store_uuid TEXT NOT NULL,
    store_epoch BIGINT NOT NULL,
    position BIGINT NOT NULL,
    last_conflicts BYTEA,
    updated_at TEXT NOT NULL
);
