-- ListStore schema, version 10: a list's identity of its own. `uid` is made when a list is created
-- and never reused, so that a new list of an old name is another list: a replica (or a replica set)
-- records the identity of the list it follows in `replica_source.list_uid`, a push names the list it
-- was made for, and a source refuses a push made for a list that no longer exists. Lists made before
-- this version get an identity now.
ALTER TABLE list ADD COLUMN uid TEXT;
UPDATE list SET uid = lower(
    hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
    substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)));
CREATE UNIQUE INDEX list_by_uid ON list (uid);
-- For a replica list: the identity of the source list it follows (NULL until a pull learns it, for
-- replicas made before this version or of sources that do not tell).
ALTER TABLE replica_source ADD COLUMN list_uid TEXT;
-- The store feed's cursors. Each event gets a random `fingerprint` when it is written: a cursor
-- carries its position's, so that a store restored from a backup without `advance-epoch`, whose
-- positions were handed out again to other events, tells a cursor of its former history (NULL for
-- events written before this version: cursors at them are taken as they are). The commits of a
-- deleted list stay as rows of their own (`deleted` 2) that the feed passes over, so that a cursor
-- at one is still told from another history's. `feed_secret` seals the cursors a journal server
-- gives users, so that a cursor tells nothing of other users' lists.
ALTER TABLE feed ADD COLUMN fingerprint INTEGER;
-- The identity of the list each event is of (a deletion's too): a follower tells a list made anew
-- under an old name from the one it held, whichever event it meets first.
ALTER TABLE feed ADD COLUMN list_uid TEXT;
UPDATE feed SET list_uid = (SELECT uid FROM list WHERE list.id = feed.list_id) WHERE deleted = 0;
ALTER TABLE store ADD COLUMN feed_secret TEXT;
UPDATE store SET feed_secret = lower(hex(randomblob(32)));
-- A replica set's cursor, as its source wrote it (a journal server's cursors are sealed; `position`
-- then says nothing).
ALTER TABLE replica_set ADD COLUMN cursor TEXT;
