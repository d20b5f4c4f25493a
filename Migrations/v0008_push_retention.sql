-- ListStore schema, version 8: the record of pushes is pruned with the journal (the ListStore
-- catalog's "History and Retention"). Pruning a list folds each client's records of pushes merged
-- into versions up to the new base, all but the client's latest, into one row that stands for the
-- whole run of sequence numbers: `covers_from` is the run's first sequence number, `seq` its last,
-- `version` the version holding its last (so every push of the run is in that version), and
-- `fingerprints` each push's fingerprint in order, 64 lowercase hexadecimal digits each (64 zeros
-- for a push recorded without one), so that a retry of any push of the run is still told from
-- another change under its number. A run has no conflict report and no `fingerprint`. Both new
-- columns are NULL for a row that records its own push only.
ALTER TABLE push ADD COLUMN covers_from INTEGER;
ALTER TABLE push ADD COLUMN fingerprints TEXT;
