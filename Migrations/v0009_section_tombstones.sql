-- ListStore schema, version 9: the sections a list had and lost, so that a merge tells an intent on
-- a section theirs deleted (`sectionDeleted`, `deleted`) from one on a section the list never had
-- (`unknownSection`: no replica of the list can name one; a forged or broken push does).
--
-- `section_tombstone` holds each identifier of a section a commit deleted, once per list.
-- `list.tombstones_from` is the version from which the list's deletions are all recorded: 0 for a
-- list made by this schema; a list that already had a history is counted from its head, and a
-- section missing from it is taken as deleted, never as unknown.
CREATE TABLE section_tombstone (
    list_id INTEGER NOT NULL REFERENCES list(id),
    identifier TEXT NOT NULL,
    PRIMARY KEY (list_id, identifier)
) WITHOUT ROWID;

ALTER TABLE list ADD COLUMN tombstones_from INTEGER NOT NULL DEFAULT 0;
UPDATE list SET tombstones_from = head_version;
