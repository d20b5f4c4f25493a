-- ListStore schema, version 5: pushes known by their content, replicas that know their client ids
-- (ListMerge's article “Offline writes and conflicts”, “What a replica promises”).
--
-- The fingerprint of each recorded push (the SHA-256 of its intents, author and message): the same
-- (client, seq) with other content is refused instead of answered as a retry. NULL for pushes
-- recorded before this version.
ALTER TABLE push ADD COLUMN fingerprint TEXT;

-- The client id each local change is (or will be) pushed under: a replica that learns its id is used
-- by another replica (a copied file, a restored backup) moves the changes the source has not recorded
-- to a new id, and keeps the others where the source recorded them.
ALTER TABLE outbox ADD COLUMN client_id TEXT;
UPDATE outbox SET client_id = (SELECT client_id FROM store WHERE id = 1);

-- Which file the store's client id belongs to (device and inode): a copy of the file, or the file
-- restored from a backup, is another file, and takes a new client id before its first local change.
ALTER TABLE store ADD COLUMN file_identity TEXT;
