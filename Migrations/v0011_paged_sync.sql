-- ListStore schema, version 11: first syncs and resyncs in pages (ListStoreCore's article "Lists of
-- Any Size"). While a replica list copies its source's state at one version page by page, each page
-- lands here in its own transaction; the replica becomes that version in one transaction when the
-- last page has landed (which empties these rows), so a half list is never the replica, and a sync
-- killed midway resumes from its last page. One row per replica list (by name: a first sync's list
-- has no row of its own yet) saying what it copies and how far it got; `next_cursor` is the source's
-- cursor of the next page (NULL: every page landed).
CREATE TABLE staged_sync (
    list_name TEXT PRIMARY KEY,
    store_uuid TEXT NOT NULL,
    store_epoch INTEGER NOT NULL,
    source_list TEXT NOT NULL,
    list_uid TEXT,
    version INTEGER NOT NULL,
    digest TEXT NOT NULL,
    section_count INTEGER NOT NULL,
    element_count INTEGER NOT NULL,
    next_cursor TEXT,
    records INTEGER NOT NULL,
    elements INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    reason TEXT NOT NULL,
    started_at TEXT NOT NULL
);
-- The records landed so far, in list order (`seq` from 0): a section's (`is_section` 1) or an
-- element of the section whose record came last.
CREATE TABLE staged_record (
    list_name TEXT NOT NULL,
    seq INTEGER NOT NULL,
    is_section INTEGER NOT NULL,
    identifier TEXT NOT NULL,
    content TEXT NOT NULL,
    PRIMARY KEY (list_name, seq)
) WITHOUT ROWID;
