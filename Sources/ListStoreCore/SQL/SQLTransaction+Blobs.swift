extension SQLTransaction {
    // MARK: Blobs

    package func blobRow(_ hash: ContentHash) throws -> (size: Int, whole: Bool)? {
        try row("SELECT size, whole FROM blob WHERE hash = ?", [.hash(hash)]).map { (try $0.int(0), try $0.bool(1)) }
    }

    package func insertBlob(_ hash: ContentHash, size: Int) throws {
        try run("INSERT INTO blob (hash, size, whole) VALUES (?, ?, 0) ON CONFLICT DO NOTHING", [.hash(hash), SQLValue(size)])
    }

    package func markBlobWhole(_ hash: ContentHash) throws {
        try run("UPDATE blob SET whole = 1 WHERE hash = ?", [.hash(hash)])
    }

    package func lockBlob(_ hash: ContentHash) throws {
        guard dialect == .postgres else { return }
        _ = try rows("SELECT 1 FROM blob WHERE hash = ? FOR UPDATE", [.hash(hash)])
    }

    package func blobPart(_ hash: ContentHash, start: Int) throws -> [UInt8]? {
        try row("SELECT bytes FROM blob_part WHERE hash = ? AND start = ?", [.hash(hash), SQLValue(start)]).map { try $0.bytes(0) }
    }

    package func insertBlobPart(_ hash: ContentHash, start: Int, bytes: [UInt8]) throws -> Bool {
        try run("INSERT INTO blob_part (hash, start, bytes) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", [.hash(hash), SQLValue(start), .blob(bytes)]) > 0
    }

    package func deleteBlob(_ hash: ContentHash) throws {
        for table in ["blob_part", "blob_upload", "blob"] { try run("DELETE FROM \(table) WHERE hash = ?", [.hash(hash)]) }
    }

    package func blobUpload(listID: Int64, hash: ContentHash) throws -> Int? {
        try row("SELECT received FROM blob_upload WHERE list_id = ? AND hash = ?", [.integer(listID), .hash(hash)]).map { try $0.int(0) }
    }

    package func setBlobUpload(listID: Int64, hash: ContentHash, received: Int?, at time: String) throws {
        guard let received else {
            try run("DELETE FROM blob_upload WHERE list_id = ? AND hash = ?", [.integer(listID), .hash(hash)])
            return
        }
        try run(
            """
            INSERT INTO blob_upload (list_id, hash, received, updated_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (list_id, hash) DO UPDATE SET received = excluded.received, updated_at = excluded.updated_at
            """, [.integer(listID), .hash(hash), SQLValue(received), .text(time)])
    }

    package func idleBlobUploads(listID: Int64, before time: String) throws -> [ContentHash] {
        try rows("SELECT hash FROM blob_upload WHERE list_id = ? AND updated_at < ? ORDER BY hash", [.integer(listID), .text(time)]).map { try $0.hash(0) }
    }

    package func listBlobs(listID: Int64, among hashes: Set<ContentHash>) throws -> Set<ContentHash> {
        var found = Set<ContentHash>()
        try inRuns(of: Array(hashes)) { run, marks in
            for row in try rows("SELECT hash FROM list_blob WHERE list_id = ? AND hash IN (\(marks))", [.integer(listID)] + run.map(SQLValue.hash)) {
                found.insert(try row.hash(0))
            }
        }
        return found
    }

    package func listBlobs(listID: Int64) throws -> [(hash: ContentHash, uploaded: Bool)] {
        try rows("SELECT hash, uploaded FROM list_blob WHERE list_id = ? ORDER BY hash", [.integer(listID)]).map { (try $0.hash(0), try $0.bool(1)) }
    }

    package func hasUploadedBlob(listID: Int64, hash: ContentHash) throws -> Bool {
        try row("SELECT 1 FROM list_blob WHERE list_id = ? AND hash = ? AND uploaded = 1", [.integer(listID), .hash(hash)]) != nil
    }

    package func insertListBlobs(listID: Int64, hashes: Set<ContentHash>, uploaded: Bool) throws {
        try inRuns(of: Array(hashes), mark: "(?, ?, ?, ?)") { run, marks in
            try self.run(
                "INSERT INTO list_blob (list_id, hash, uploaded, from_source) VALUES \(marks) ON CONFLICT (list_id, hash) DO "
                    + (uploaded ? "UPDATE SET uploaded = 1" : "UPDATE SET from_source = 1"),
                run.flatMap { [.integer(listID), .hash($0), .integer(uploaded ? 1 : 0), .integer(uploaded ? 0 : 1)] })
        }
    }

    package func deleteListBlobs(listID: Int64) throws -> Set<ContentHash> {
        var hashes = Set<ContentHash>()
        for table in ["list_blob", "blob_upload"] {
            for row in try rows("SELECT hash FROM \(table) WHERE list_id = ?", [.integer(listID)]) { hashes.insert(try row.hash(0)) }
            try run("DELETE FROM \(table) WHERE list_id = ?", [.integer(listID)])
        }
        return hashes
    }

    package func deleteListBlobs(listID: Int64, among hashes: Set<ContentHash>) throws {
        try inRuns(of: Array(hashes)) { run, marks in
            try self.run("DELETE FROM list_blob WHERE list_id = ? AND hash IN (\(marks))", [.integer(listID)] + run.map(SQLValue.hash))
        }
    }

    package func touchListBlob(listID: Int64, hash: ContentHash) throws {
        try run(
            "UPDATE list_blob SET used = (SELECT coalesce(max(used), 0) + 1 FROM list_blob WHERE list_id = ?) WHERE list_id = ? AND hash = ?",
            [.integer(listID), .integer(listID), .hash(hash)])
    }

    package func cachedBlobs(listID: Int64) throws -> [(hash: ContentHash, size: Int)] {
        try rows(
            """
            SELECT list_blob.hash, blob.size FROM list_blob JOIN blob ON blob.hash = list_blob.hash
            WHERE list_blob.list_id = ? AND list_blob.uploaded = 1 AND list_blob.from_source = 1 AND blob.whole = 1
            ORDER BY list_blob.used, list_blob.hash
            """, [.integer(listID)]
        ).map { (try $0.hash(0), try $0.int(1)) }
    }

    package func unholdListBlobs(listID: Int64, hashes: Set<ContentHash>) throws {
        try inRuns(of: Array(hashes)) { run, marks in
            try self.run("UPDATE list_blob SET uploaded = 0 WHERE list_id = ? AND hash IN (\(marks))", [.integer(listID)] + run.map(SQLValue.hash))
        }
    }

    package func unclaimedBlobs(among hashes: Set<ContentHash>) throws -> Set<ContentHash> {
        var unclaimed = hashes
        try inRuns(of: Array(hashes)) { run, marks in
            let sql = "SELECT hash FROM list_blob WHERE uploaded = 1 AND hash IN (\(marks)) UNION SELECT hash FROM blob_upload WHERE hash IN (\(marks))"
            let arguments = run.map(SQLValue.hash)
            for row in try rows(sql, arguments + arguments) { unclaimed.remove(try row.hash(0)) }
        }
        return unclaimed
    }
}
