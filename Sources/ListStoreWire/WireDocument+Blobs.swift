import ListJSON
import ListStoreCore

extension WireDocument {
    /// `{"blob":"sha256-…","list":…,"schemaVersion":1,"size":…|null,"stored":…,"uploaded":…}`: where
    /// a list stands with a blob (`PUT /v1/lists/{list}/blobs/{blob}` and
    /// `GET /v1/lists/{list}/blobs/{blob}/upload`): whether it has the blob's bytes (`stored`), and
    /// how many bytes its upload sent (the byte an interrupted upload resumes at).
    /// - Complexity: O(1).
    package static func blobStatus(_ status: BlobStatus, list: String) -> [UInt8] {
        JSONWriter.object { w in
            w.member("blob", BlobReference.id(of: status.hash))
            w.member("list", list)
            w.schemaVersion()
            w.key("size")
            if let size = status.size { w.value(.number(JSONNumber(size))) } else { w.null() }
            w.member("stored", status.isStored)
            w.member("uploaded", status.uploaded)
        }
    }

    /// The status of a `blobStatus` document.
    /// - Throws: `DecodingError`.
    package static func decodeBlobStatus(_ bytes: [UInt8]) throws -> BlobStatus {
        let object = try topLevel(bytes, "blob status")
        guard let hash = BlobReference.hash(ofID: try string(object, "blob")) else {
            throw DecodingError(description: "blob status: \"blob\" is not sha256- and 64 lowercase hexadecimal digits")
        }
        guard let stored = object["stored"]?.boolValue else { throw DecodingError(description: "blob status: expected a Boolean \"stored\"") }
        let size: Int? = object["size"]?.isNull == false ? try int(object, "size") : nil
        guard (size ?? 0) <= BlobReference.maxSize else { throw DecodingError(description: "blob status: a size past \(BlobReference.maxSize)") }
        return BlobStatus(hash: hash, size: size, uploaded: try int(object, "uploaded"), isStored: stored)
    }
}
