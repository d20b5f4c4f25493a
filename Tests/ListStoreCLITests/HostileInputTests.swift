import Foundation
import ListJSON
import ListStore
import ListStoreTestSupport
import ListDiffTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Input an attacker or an unlucky user gives the command line: contents nested to the limit and
/// past it, FIFOs and read-only stores at `--db`, authors and messages that hold escape sequences.
@Suite(.serialized, .blockingWaits) struct HostileInputTests {
    /// A snapshot document of one section whose element content nests `depth` levels.
    private func deepDocument(_ depth: Int, section: String = "s") -> String {
        let open = (0..<depth).map { $0 % 2 == 0 ? "[" : #"{"k":"# }.joined()
        let close = (0..<depth).reversed().map { $0 % 2 == 0 ? "]" : "}" }.joined()
        return #"{"sections":[{"id":"\#(section)","elements":[{"id":"e","content":\#(open)1\#(close)}]}]}"#
    }

    /// Runs `liststore arguments…`, killing it after `seconds` (a hang is a failure, not a stuck suite).
    private func runBounded(_ arguments: [String], seconds: Double = 60, standardInput: FileHandle = .nullDevice) throws
        -> (status: Int32, stderr: String, timedOut: Bool)
    {
        let process = Process()
        process.executableURL = CLIRunner.binary
        process.arguments = arguments
        process.standardInput = standardInput
        process.standardOutput = FileHandle.nullDevice
        let stderr = Pipe()
        process.standardError = stderr
        let done = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in done.signal() }
        process.endsWithTestProcess()
        try process.runWhenDescriptorsAllow()
        let timedOut = done.wait(timeout: .now() + seconds) == .timedOut
        if timedOut {
            kill(process.processIdentifier, SIGKILL)
            done.wait()
        }
        let text = String(decoding: PipeIO.readAll(stderr.fileHandleForReading), as: UTF8.self)
        return (process.terminationStatus, text, timedOut)
    }

    /// Standard input that cannot be read (a directory here: read(2) fails with EISDIR) is one line
    /// on stderr and exit 66, and no store is made.
    @Test func unreadableStandardInputIsOneLineAndExit66() throws {
        let dir = try TemporaryDirectory()
        let db = dir.url.appendingPathComponent("s.liststore").path
        let directory = try #require(FileHandle(forReadingAtPath: dir.url.path))
        let result = try runBounded(["commit", "--db", db, "--list", "l", "--file", "-"], standardInput: directory)
        #expect(!result.timedOut && result.status == 66, "\(result.stderr)")
        #expect(result.stderr.contains("standard input") && result.stderr.filter { $0 == "\n" }.count == 1, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: db))
    }

    @Test func contentAtTheDepthLimitCommitsAndEveryReaderReadsIt() throws {
        let dir = try TemporaryDirectory()
        let db = dir.url.appendingPathComponent("deep.liststore").path
        let limit = JSONParser.maxContentDepth
        let first = try CLIRunner.run(["commit", "--db", db, "--list", "l", "--file", try dir.file("v1.json", deepDocument(limit))])
        #expect(first.status == 0, "\(first.stderr)")
        let second = try CLIRunner.run(["commit", "--db", db, "--list", "l", "--file", try dir.file("v2.json", deepDocument(limit, section: "t"))])
        #expect(second.status == 0, "\(second.stderr)")
        for arguments in [
            ["verify", "--db", db], ["show", "--db", db, "--list", "l", "--at", "1", "--json"],
            ["log", "--db", db, "--list", "l", "--json"], ["log", "--db", db, "--list", "l"],
            ["diff", "--db", db, "--list", "l", "--from-version", "1", "--json"],
        ] {
            let result = try CLIRunner.run(arguments)
            #expect(result.status == 0, "\(arguments[0]): \(result.stderr)")
            if arguments.last == "--json" { #expect(throws: Never.self) { try JSONValue(parsing: result.stdout) } }
        }
        let replica = dir.url.appendingPathComponent("replica.liststore").path
        let pulled = try CLIRunner.run(["pull", "--db", db, "--list", "l", "--replica", replica])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(try Store(path: replica).snapshot(of: "l").digest == Store(path: db).snapshot(of: "l").digest)
    }

    @Test func contentPastTheDepthLimitIsRefusedWith65() throws {
        let dir = try TemporaryDirectory()
        let db = dir.url.appendingPathComponent("deep.liststore").path
        #expect(try CLIRunner.run(["commit", "--db", db, "--list", "l", "--file", try dir.file("ok.json", deepDocument(3))]).status == 0)
        for depth in [JSONParser.maxContentDepth + 1, JSONParser.defaultMaxDepth, 100_000] {
            let refused = try CLIRunner.run(["commit", "--db", db, "--list", "l", "--file", try dir.file("deep.json", deepDocument(depth))])
            #expect(refused.status == 65)
            #expect(refused.stderr.hasPrefix("liststore: error: ") && refused.stderr.filter { $0 == "\n" }.count == 1)
            #expect(refused.stderr.contains("deeper than"))
        }
        #expect(try Store(path: db).summary(of: "l").version == 1)
    }

    @Test func aFIFOAtDbIsRefusedAtOnce() throws {
        let dir = try TemporaryDirectory()
        let fifo = dir.url.appendingPathComponent("fifo.liststore").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let snapshot = try dir.file("v.json", #"{"sections":[]}"#)
        for arguments in [
            ["lists", "--db", fifo], ["verify", "--db", fifo], ["commit", "--db", fifo, "--list", "l", "--file", snapshot],
            ["show", "--db", fifo, "--list", "l"],
        ] {
            let result = try runBounded(arguments)
            #expect(!result.timedOut, "\(arguments[0]) hung on a FIFO")
            #expect(result.status == 65, "\(arguments[0]): \(result.stderr)")
            #expect(result.stderr.contains("not a regular file"))
        }
        // A FIFO where the write-ahead log belongs is refused too.
        let db = dir.url.appendingPathComponent("s.liststore").path
        #expect(try CLIRunner.run(["commit", "--db", db, "--list", "l", "--file", snapshot]).status == 0)
        #expect(mkfifo(db + "-wal", 0o644) == 0)
        let wal = try runBounded(["lists", "--db", db])
        #expect(!wal.timedOut && wal.status == 65 && wal.stderr.contains("-wal is not a regular file"))
    }

    @Test func authorsMessagesAndNamesCannotDriveTheTerminal() throws {
        let dir = try TemporaryDirectory()
        let db = dir.url.appendingPathComponent("s.liststore").path
        let committed = try CLIRunner.run([
            "commit", "--db", db, "--list", "l", "--file", try dir.file("v.json", #"{"sections":[{"id":"s"}]}"#),
            "--author", "mallory\u{1B}]0;owned\u{7}", "--message", "fine\nliststore: forged line\u{1B}[2J\u{202E}",
        ])
        #expect(committed.status == 0)
        let log = try CLIRunner.run(["log", "--db", db, "--list", "l"])
        #expect(log.status == 0)
        #expect(!log.stdout.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x202E })
        #expect(log.stdout.split(separator: "\n").count == 2)  // the header and one entry, nothing forged
        #expect(log.stdout.contains(#"mallory\u{1B}]0;owned\u{7}"#))
        #expect(log.stdout.contains(#"fine\u{A}liststore: forged line\u{1B}[2J\u{202E}"#))
        // Names echoed in errors are escaped as well.
        let missing = try CLIRunner.run(["show", "--db", db, "--list", "x\u{1B}[31m\u{202E}y"])
        #expect(missing.status == 65)
        #expect(!missing.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E })
        #expect(missing.stderr.filter { $0 == "\n" }.count == 1)
    }

    // MARK: - Read-only stores

    /// Root may write any file, so a store is read-only to a command only when it runs as another
    /// user: as root, commands run as `nobody` through setpriv; otherwise as this user, with modes.
    private static let asNobody = geteuid() == 0
    private static let canRunReadOnly = !asNobody || FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    /// Runs `liststore arguments…` as a user who may read but not write what the test made.
    private func runAsReader(_ arguments: [String]) throws -> CLIRunner.Result {
        guard Self.asNobody else { return try CLIRunner.run(arguments) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "--", CLIRunner.binary.path] + arguments
        let (stdout, stderr) = (Pipe(), Pipe())
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdout
        process.standardError = stderr
        process.endsWithTestProcess()  // setpriv runs liststore in its own place: it stays this process's child
        try process.runWhenDescriptorsAllow()
        let out = PipeIO.readAll(stdout.fileHandleForReading)
        let err = PipeIO.readAll(stderr.fileHandleForReading)
        process.waitUntilExit()
        return .init(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }

    private func chmod(_ path: String, _ mode: mode_t) {
        #if canImport(Glibc)
        _ = Glibc.chmod(path, mode)
        #else
        _ = Darwin.chmod(path, mode)
        #endif
    }

    private func files(in directory: String) -> [String: Data] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return Dictionary(uniqueKeysWithValues: names.map { ($0, FileManager.default.contents(atPath: directory + "/" + $0) ?? Data()) })
    }

    @Test(.enabled(if: canRunReadOnly)) func aReadOnlyStoreIsReadAndLeftAsItWas() throws {
        let dir = try TemporaryDirectory()
        let storeDirectory = dir.url.appendingPathComponent("ro").path
        let replicaDirectory = dir.url.appendingPathComponent("rw").path
        try FileManager.default.createDirectory(atPath: storeDirectory, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: replicaDirectory, withIntermediateDirectories: false)
        chmod(dir.url.path, 0o755)
        chmod(replicaDirectory, 0o777)
        let db = storeDirectory + "/s.liststore"
        let v1 = try dir.file("v1.json", #"{"sections":[{"id":"s","elements":[{"id":"a"},{"id":"b"}]}]}"#)
        let v2 = try dir.file("v2.json", #"{"sections":[{"id":"s","elements":[{"id":"b"},{"id":"c"}]}]}"#)
        let v3 = try dir.file("v3.json", #"{"sections":[{"id":"s","elements":[{"id":"z"}]}]}"#)
        for file in [v1, v2, v3] { chmod(file, 0o644) }
        #expect(try CLIRunner.run(["commit", "--db", db, "--list", "l", "--file", v1]).status == 0)

        // The directory may be written by the reader or not; the store file may not.
        for readerMayWriteDirectory in [false, true] {
            chmod(db, Self.asNobody ? 0o644 : 0o444)
            chmod(storeDirectory, readerMayWriteDirectory ? 0o777 : (Self.asNobody ? 0o755 : 0o555))
            let before = files(in: storeDirectory)
            for arguments in [
                ["lists", "--db", db], ["verify", "--db", db], ["show", "--db", db, "--list", "l"], ["log", "--db", db, "--list", "l"],
                ["pull", "--db", db, "--list", "l", "--replica", replicaDirectory + "/r\(readerMayWriteDirectory).liststore"],
            ] {
                let result = try runAsReader(arguments)
                #expect(result.status == 0, "\(arguments[0]) (directory writable: \(readerMayWriteDirectory)): \(result.stderr)")
            }
            let refused = try runAsReader(["commit", "--db", db, "--list", "l", "--file", v3])
            #expect(refused.status == 74, "\(refused.stdout) \(refused.stderr)")
            #expect(refused.stderr.contains("read-only"), "\(refused.stderr)")
            #expect(files(in: storeDirectory) == before, "a failed or read-only command left files behind")

            // Once the modes are back, the owner writes as before.
            chmod(storeDirectory, 0o755)
            chmod(db, 0o644)
            #expect(try CLIRunner.run(["commit", "--db", db, "--list", "l", "--file", readerMayWriteDirectory ? v1 : v2]).status == 0)
            #expect(try CLIRunner.run(["verify", "--db", db]).status == 0)
        }
    }

    @Test(.enabled(if: canRunReadOnly)) func aReadOnlyStoreOpenByAWriterIsReadThroughItsLog() throws {
        let dir = try TemporaryDirectory()
        chmod(dir.url.path, 0o755)
        let db = dir.url.appendingPathComponent("s.liststore").path
        // This process keeps the store open with a commit still in the write-ahead log.
        let writer = try Store(path: db)
        try writer.commit([ListSection(model: ListItem(id: "s"), elements: [ListItem(id: "a")])], to: "l")
        try writer.commit([ListSection(model: ListItem(id: "s"), elements: [ListItem(id: "b")])], to: "l")
        #expect(FileManager.default.fileExists(atPath: db + "-wal") && FileManager.default.fileExists(atPath: db + "-shm"))
        if !Self.asNobody { chmod(db, 0o444); chmod(dir.url.path, 0o555) }
        defer { chmod(dir.url.path, 0o755); chmod(db, 0o644) }
        let listed = try runAsReader(["lists", "--db", db, "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let lists = try JSONValue(parsing: listed.stdout)["lists"]
        #expect(lists?.arrayValue?.first?["version"]?.intValue == 2)
        #expect(try writer.verify().isValid)
    }
}
