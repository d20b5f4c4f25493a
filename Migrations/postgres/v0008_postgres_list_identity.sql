-- ListStore schema on PostgreSQL, version 8 (SQLite's version 10): a list's identity of its own.
-- `uid` is made when a list is created and never reused, so that a new list of an old name is
-- another list: a replica (or a replica set) records the identity of the list it follows in
-- `replica_source.list_uid`, a push names the list it was made for, and a source refuses a push
-- made for a list that no longer exists. Lists made before this version get an identity now.
ALTER TABLE list ADD COLUMN uid TEXT;
UPDATE list SET uid = gen_random_uuid()::text;
CREATE UNIQUE INDEX list_by_uid ON list (uid);
-- For a replica list: the identity of the source list it follows (NULL until a pull learns it).
ALTER TABLE replica_source ADD COLUMN list_uid TEXT;
-- The store feed's cursors (see SQLite's version 10): each event's random `fingerprint`, the
-- commits of deleted lists kept as rows the feed passes over (`deleted` 2), the secret that seals
-- users' cursors, and a replica set's cursor as its source wrote it.
ALTER TABLE feed ADD COLUMN fingerprint BIGINT;
ALTER TABLE feed ADD COLUMN list_uid TEXT;
UPDATE feed SET list_uid = (SELECT uid FROM list WHERE list.id = feed.list_id) WHERE deleted = 0;
ALTER TABLE store ADD COLUMN feed_secret TEXT;
UPDATE store SET feed_secret = replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
ALTER TABLE replica_set ADD COLUMN cursor TEXT;
