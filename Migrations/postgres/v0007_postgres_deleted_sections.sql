-- ListStore schema on PostgreSQL, version 7 (SQLite's version 9): the sections deleted from each
-- list, so that a merge tells an intent naming a section the list deleted (`sectionDeleted`,
-- `deleted`) from one naming a section it never had (`unknownSection`). A row per identifier of a
-- section a commit deleted (one however often a section of that identifier was deleted).
-- `deleted_sections_kept` is 1 for a list whose every deleted section is here: lists made from this
-- version on, replica lists excepted (their history starts at their source's version). Lists made
-- before keep 0 (their earlier deletions were not recorded), and their merges report every missing
-- section as deleted, as before.
CREATE TABLE deleted_section (
    list_id BIGINT NOT NULL REFERENCES list(id),
    identifier BYTEA NOT NULL,
    PRIMARY KEY (list_id, identifier)
);
ALTER TABLE list ADD COLUMN deleted_sections_kept SMALLINT NOT NULL DEFAULT 0;
