import ArgumentParser
import Crypto
import Foundation
import ListJSON
import ListStore
import ListSync
import NIOFileSystem

/// `liststore blob put|get|trim`: a list's attachments.
struct BlobCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blob",
        abstract: "Store a file as a blob of a list, write a blob of a list out, or trim a replica's blobs.",
        discussion: """
            A blob is the bytes an element's content refers to with {"$blob":"sha256-…","size":N}: \
            a photo, a file. It belongs to the lists it was uploaded to; a commit may refer to it \
            once its list has it.
            """,
        subcommands: [Put.self, Get.self, Trim.self]
    )

    /// The bytes a file is read in, and a blob written out in.
    static let pieceBytes = 1 << 20

    /// `liststore blob put --db STORE --list L FILE [--type T] [--name N]`.
    struct Put: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "put",
            abstract: "Store a file as a blob of a list, and print its reference.",
            discussion: """
                Reads FILE twice, a MiB at a time (to hash it, then to store it: a file that \
                changes between the two is refused, and not stored), and prints the blob's \
                reference as one JSON object on stdout: {"$blob":"sha256-…","name":…,"size":…,\
                "type":…}, to put in an element's content. --name defaults to the file's name; \
                --type (a media type such as image/jpeg) is left out unless given. Storing a blob \
                the list has changes nothing. In a replica, 'push' and 'sync' upload it to the \
                source before the change that refers to it. The list must exist.

                \(ExitStatus.helpText)
                """
        )

        @OptionGroup var store: StoreOptions
        @OptionGroup var list: ListOption

        @Option(name: .long, help: ArgumentHelp("The blob's media type, e.g. image/jpeg.", valueName: "type"))
        var type: String?

        @Option(name: .long, help: ArgumentHelp("The blob's name (default: the file's).", valueName: "name"))
        var name: String?

        @Argument(help: ArgumentHelp("The file.", valueName: "file"))
        var file: String

        func run() async throws {
            try await Terminal.reportingFailures {
                let store = try await store.engine(existing: true)
                var (hasher, size) = (SHA256(), 0)
                try await BlobCommand.reading(file) { piece in
                    hasher.update(data: piece)
                    size += piece.count
                }
                guard size <= BlobReference.maxSize else {
                    throw CommandFailure("\(Output.quoted(file)) has more than the \(BlobReference.maxSize) bytes a blob may have", status: ExitStatus.invalidData)
                }
                let hash = hasher.finalize().withUnsafeBytes { ContentHash(bytes: $0)! }
                let reference = BlobReference(hash: hash, size: size, type: type, name: name ?? URL(fileURLWithPath: file).lastPathComponent)
                guard (reference.name?.utf8.count ?? 0) <= BlobReference.maxTextBytes, (reference.type?.utf8.count ?? 0) <= BlobReference.maxTextBytes else {
                    throw CommandFailure("--name and --type have at most \(BlobReference.maxTextBytes) bytes each", status: ExitStatus.usage)
                }
                let list = list.list
                let stored = try await store.call { store in
                    try await store.storeBlob(reference, to: list, from: BlobCommand.pieces(of: file), startingAt: 0)
                }
                guard stored.isStored else {
                    throw CommandFailure(
                        "\(Output.quoted(file)) became shorter while it was stored: it is not stored (the parts sent stay for an upload of the same bytes)",
                        status: ExitStatus.ioError)
                }
                Terminal.out(reference.json.serialized() + "\n")
            }
        }
    }

    /// `liststore blob get --db STORE --list L HASH [--out FILE] [--from URL [--token T]]`.
    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get",
            abstract: "Write a blob of a list to a file or to stdout.",
            discussion: """
                Writes the bytes of blob HASH (sha256-…) of the list to --out FILE, which appears \
                whole or not at all, or to stdout. A replica that does not hold the blob's bytes \
                (a blob of its source) fetches them from its source first with --from URL (and \
                --token, or LISTSTORE_TOKEN), 4 MiB at a time, and keeps them: an interrupted \
                fetch resumes where it stopped. A blob the list does not have exits with 65.

                \(ExitStatus.helpText)
                """
        )

        @OptionGroup var store: StoreOptions
        @OptionGroup var list: ListOption

        @Argument(help: ArgumentHelp("The blob: sha256- and 64 lowercase hexadecimal digits.", valueName: "hash"))
        var hash: String

        @Option(name: .long, help: ArgumentHelp("Write the bytes to this file instead of stdout.", valueName: "file"))
        var out: String?

        @Option(name: .long, help: ArgumentHelp("The replica's source server, to fetch the bytes from.", valueName: "url"))
        var from: String?

        @Option(name: .long, help: ArgumentHelp("The server's token (default: $LISTSTORE_TOKEN).", valueName: "token"))
        var token: String?

        func validate() throws {
            if BlobReference.hash(ofID: hash) == nil { throw ValidationError("the blob must be sha256- and 64 lowercase hexadecimal digits") }
            if token != nil && from == nil { throw ValidationError("--token goes with --from") }
        }

        func run() async throws {
            try await Terminal.reportingFailures {
                let store = try await store.engine(existing: true)
                let (list, hash) = (list.list, BlobReference.hash(ofID: hash)!)
                var status = try await store.call { try await $0.blob(hash, of: list) }
                if status?.isStored != true, let from {
                    status = try await fetch(hash, of: list, into: store.engine, from: from)
                }
                guard let status, status.isStored, let size = status.size else {
                    let fetch = from == nil ? " (a replica fetches its source's with --from)" : ""
                    throw CommandFailure("list \(Output.quoted(list)) has no blob \(BlobReference.id(of: hash)) here\(fetch)", status: ExitStatus.invalidData)
                }
                let engine = store.engine
                let pieces = _BlobPieces(range: 0..<size) { try await engine.readBlob(hash, of: list, from: $0, maxBytes: $1) }
                try await StoreFailure.mapping {
                    if let out { try await BlobCommand.write(pieces, to: out) } else { try await BlobCommand.writeOut(pieces) }
                }
            }
        }

        /// Fetches the bytes of blob `hash` of replica list `list` from its source at `url`.
        private func fetch(_ hash: ContentHash, of list: String, into store: some ReplicaStore, from url: String) async throws -> BlobStatus? {
            let token = token ?? ProcessInfo.processInfo.environment["LISTSTORE_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
            let source: HTTPSource
            do {
                source = try HTTPSource(url, token: token)
            } catch {
                throw CommandFailure("\(error)", status: ExitStatus.usage)
            }
            do {
                let replica = Replica(store: store, list: list)
                guard let position = try await replica.position() else {
                    throw CommandFailure("list \(Output.quoted(list)) is not a replica: it has no source to fetch from", status: ExitStatus.invalidData)
                }
                guard let there = try await source.blob(hash, of: position.list), there.isStored, let size = there.size, size <= BlobReference.maxSize
                else { return nil }
                let bar = BlobProgressBar(hash: hash)
                defer { bar.finish() }
                return try await replica.fetchBlob(BlobReference(hash: hash, size: size), from: source, progress: bar.reporter)
            } catch let failure as CommandFailure {
                throw failure
            } catch {
                throw SyncFailure.mapped(error)
            }
        }
    }

    /// `liststore blob trim --db REPLICA --list L --max-mib N [--json]`.
    struct Trim: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "trim",
            abstract: "Drop the bytes of a replica's blobs down to a budget, the ones used longest ago first.",
            discussion: """
                A replica list keeps the bytes of its source's blobs (fetched with blob get \
                --from, or pushed) as a cache: trim drops them, the ones used longest ago first, \
                until the list holds at most --max-mib MiB of them. The bytes of a blob that a \
                change not pushed yet refers to stay, whatever the budget, and so do those of a \
                blob stored here that no content of the source refers to yet; a dropped blob is \
                fetched again by blob get --from. A list that follows no source exits with 65. \
                --json prints \
                {"schemaVersion":1,"list":…,"droppedBlobs":…,"droppedBytes":…,"heldBytes":…}.

                \(ExitStatus.helpText)
                """
        )

        @OptionGroup var store: StoreOptions
        @OptionGroup var list: ListOption

        @Option(name: .customLong("max-mib"), help: ArgumentHelp("The most MiB of blobs the list keeps (0 or more).", valueName: "mib"))
        var maxMiB: Int

        @Flag(name: .long, help: "Print one JSON document instead of a summary.")
        var json = false

        func validate() throws {
            if !(0...(1 << 40)).contains(maxMiB) { throw ValidationError("--max-mib must be between 0 and \(1 << 40)") }
        }

        func run() async throws {
            try await Terminal.reportingFailures {
                let store = try await store.engine(existing: true)
                let (name, maxBytes) = (list.list, maxMiB << 20)
                let trim = try await store.call { try await Self.trim(name, of: $0, to: maxBytes) }
                if json {
                    Output.json([
                        "list": .string(list.list), "droppedBlobs": JSONValue(trim.droppedBlobs),
                        "droppedBytes": JSONValue(trim.droppedBytes), "heldBytes": JSONValue(trim.heldBytes),
                    ])
                    return
                }
                Terminal.out(
                    "\(Output.quoted(list.list)): \(trim.droppedBlobs) \(trim.droppedBlobs == 1 ? "blob" : "blobs") dropped "
                        + "(\(trim.droppedBytes) bytes); \(trim.heldBytes) bytes of blobs held.\n")
            }
        }

        private static func trim(_ list: String, of store: some ReplicaStore, to maxBytes: Int) async throws -> BlobCacheTrim {
            do {
                return try await Replica(store: store, list: list).trimBlobCache(to: maxBytes)
            } catch let error as SyncError {
                throw CommandFailure("\(error)", status: ExitStatus.invalidData)
            }
        }
    }

    /// Calls `body` with each piece of the file at `path`, a MiB at a time.
    /// - Throws: `CommandFailure` 66 when the file cannot be read.
    static func reading(_ path: String, _ body: ([UInt8]) throws -> Void) async throws {
        for try await piece in pieces(of: path) { try body(piece) }
    }

    /// The bytes of the file at `path`, a MiB at a time, each read when it is asked for.
    static func pieces(of path: String) -> FilePieces { FilePieces(path: path) }

    /// The bytes of a file, `pieceBytes` at a time, each read at its offset when it is asked for
    /// (the file opened for the read): nothing holds more than a piece.
    struct FilePieces: AsyncSequence, Sendable {
        typealias Element = [UInt8]
        let path: String

        struct AsyncIterator: AsyncIteratorProtocol {
            let path: String
            var offset: Int64 = 0

            mutating func next() async throws -> [UInt8]? {
                let offset = offset
                do {
                    let piece = try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(path)) { handle in
                        try await handle.readChunk(fromAbsoluteOffset: offset, length: .bytes(Int64(pieceBytes)))
                    }
                    self.offset += Int64(piece.readableBytes)
                    return piece.readableBytes == 0 ? nil : Array(buffer: piece)
                } catch {
                    throw CommandFailure("cannot read \(Output.quoted(path)): \(error)", status: ExitStatus.missingInput)
                }
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(path: path) }
    }

    /// Writes `pieces` to a new file at `path`, which appears whole when they are all written (it
    /// replaces a file there then), or not at all.
    static func write(_ pieces: some AsyncSequence<[UInt8], any Error>, to path: String) async throws {
        do {
            try await FileSystem.shared.withFileHandle(forWritingAt: FilePath(path), options: .newFile(replaceExisting: true)) { handle in
                var offset: Int64 = 0
                for try await piece in pieces {
                    try await handle.write(contentsOf: piece, toAbsoluteOffset: offset)
                    offset += Int64(piece.count)
                }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw CommandFailure("cannot write \(Output.quoted(path)): \(error)", status: ExitStatus.ioError)
        }
    }

    /// Writes `pieces` to standard output.
    static func writeOut(_ pieces: some AsyncSequence<[UInt8], any Error>) async throws {
        for try await piece in pieces { try Terminal.outBytes(piece) }
    }
}
