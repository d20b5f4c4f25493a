-- ListStore schema on PostgreSQL, version 7 (SQLite's version 9): the sections a list had and lost,
-- so that a merge tells an intent on a section theirs deleted from one on a section the list never
-- had (`unknownSection`).
--
-- `section_tombstone` holds each identifier (bytes, as `section.identifier`) of a section a commit
-- deleted, once per list. `list.tombstones_from` is the version from which the list's deletions are
-- all recorded: 0 for a list made by this schema, the head for a list that already had a history.
CREATE TABLE section_tombstone (
    list_id BIGINT NOT NULL REFERENCES list(id),
    identifier BYTEA NOT NULL,
    PRIMARY KEY (list_id, identifier)
);

ALTER TABLE list ADD COLUMN tombstones_from BIGINT NOT NULL DEFAULT 0;
UPDATE list SET tombstones_from = head_version;
