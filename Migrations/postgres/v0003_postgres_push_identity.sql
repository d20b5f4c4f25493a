-- ListStore schema on PostgreSQL, version 3: as SQLite's v0005_push_identity (but the file identity,
-- which a database does not have).
--
-- The fingerprint of each recorded push (the SHA-256 of its intents, author and message): the same
-- (client, seq) with other content is refused instead of answered as a retry. NULL for pushes
-- recorded before this version.
ALTER TABLE push ADD COLUMN fingerprint TEXT;

-- The client id each local change is (or will be) pushed under.
ALTER TABLE outbox ADD COLUMN client_id TEXT;
UPDATE outbox SET client_id = (SELECT client_id FROM store WHERE id = 1);
