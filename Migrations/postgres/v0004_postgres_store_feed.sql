-- ListStore schema on PostgreSQL, version 4 (SQLite's version 6): the store feed, every commit of
-- every list at a store-wide position (ListStoreCore's article "The Store Feed").
--
-- The store's last position, and the oldest position a follower may still resume after: pruning a
-- list's journal forgets its feed rows, and a follower behind them takes a snapshot instead.
ALTER TABLE store ADD COLUMN feed_position BIGINT NOT NULL DEFAULT 0;
ALTER TABLE store ADD COLUMN feed_base BIGINT NOT NULL DEFAULT 0;

-- One row per commit, and one per deleted list (`deleted` 1, `version` its last), in commit order: a commit takes the next position from the store's row as its
-- transaction's last write, and holds that row's lock until it commits, so that positions are handed
-- out in the order commits land (a sequence's numbers are not: a follower would skip a late one).
CREATE TABLE feed (
    position BIGINT PRIMARY KEY,
    list_id BIGINT NOT NULL,
    list TEXT NOT NULL,
    version INTEGER NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX feed_of_list ON feed (list_id, version);

-- The journals already kept, in the order they were committed.
INSERT INTO feed (position, list_id, list, version)
    SELECT row_number() OVER (ORDER BY j.committed_at, j.list_id, j.version), j.list_id, l.name, j.version
    FROM journal j JOIN list l ON l.id = j.list_id;
UPDATE store SET feed_position = (SELECT count(*) FROM feed);
