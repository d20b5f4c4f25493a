import Foundation
import ListStore
import ListStoreTestSupport
import ListDiffTestSupport
import Testing

/// `liststore-server` refuses to serve other machines without a token unless told to, loudly.
@Suite(.blockingWaits) struct ServerCommandTests {
    /// The built `liststore-server`, next to the test bundle.
    static let binary: URL = {
        let candidates = [
            Bundle.main.bundleURL,
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.allBundles.map(\.bundleURL).first { $0.pathExtension == "xctest" }?.deletingLastPathComponent(),
        ].compactMap { $0 }
        for directory in candidates {
            let url = directory.appendingPathComponent("liststore-server")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return candidates[0].appendingPathComponent("liststore-server")
    }()

    /// A started `liststore-server` with `arguments`, its output and error pipes; it ends with the
    /// test process however that ends.
    static func start(_ arguments: [String], environment: [String: String]? = nil) throws -> (process: Process, output: Pipe, errors: Pipe) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if let environment { process.environment = environment }
        let (output, errors) = (Pipe(), Pipe())
        process.standardOutput = output
        process.standardError = errors
        process.endsWithTestProcess()
        try process.runWhenDescriptorsAllow()
        return (process, output, errors)
    }

    /// The first line `pipe` carries (the server's address, on its standard output), or all it
    /// carried when it ended before one.
    static func firstLine(of pipe: Pipe) async throws -> String {
        try await RawConnection.run { () -> String in
            var data = Data()
            while !data.contains(UInt8(ascii: "\n")) {
                let chunk = PipeIO.readSome(pipe.fileHandleForReading)
                if chunk.isEmpty { break }
                data += chunk
            }
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// Runs `liststore-server` with `arguments` to its end: its status and what it wrote on stderr.
    static func refusal(_ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, message: String) {
        let (process, _, errors) = try start(arguments, environment: environment)
        let message = String(decoding: PipeIO.readAll(errors.fileHandleForReading), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, message)
    }

    /// `--auth FILE`: a file that cannot be used is refused at start (64, one line naming the rule);
    /// SIGHUP reads it again, and a file that no longer parses leaves the last one in force.
    @Test(.timeLimit(.minutes(2))) func anAccessFileIsReadAtStartAndAgainOnHangUp() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.file("s.liststore")
        let store = try Store(path: db)
        for list in ["users/ana/inbox", "public/news"] { try await store.commit(linearList(2), to: list) }
        let tokens = AccessConfigurationTests.tokens
        let authFile = directory.file("auth.json")
        func write(_ bytes: [UInt8]) throws { try Data(bytes).write(to: URL(fileURLWithPath: authFile)) }

        try write(tokens.accessFile(rules: [["lists": "users/{sub}/**", "grant": "write"], ["lists": "public/*", "grant": "owner"]]))
        let refused = try Self.refusal(["--db", db, "--port", "0", "--auth", authFile])
        #expect(refused.status == 64)
        #expect(refused.message.filter { $0 == "\n" }.count == 1 && refused.message.contains("rule 2 ('public/*'): grant 'owner'"), "\(refused.message)")

        try write(tokens.accessFile(rules: [["lists": "users/{sub}/**", "grant": "write"]]))
        let (server, output, errors) = try Self.start(["--db", db, "--port", "0", "--auth", authFile, "--token", "service"])
        /// Reads `pipe` until what came holds `marker`; what came.
        func read(_ pipe: Pipe, until marker: String) async throws -> String {
            try await RawConnection.run {
                var text = ""
                while !text.contains(marker) {
                    let chunk = PipeIO.readSome(pipe.fileHandleForReading)
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                }
                return text
            }
        }
        let line = try await read(output, until: "\n")
        let port = try #require(line.split(separator: ":").last.flatMap { Int($0.prefix { $0.isNumber }) }, "\(line)")
        let ana = tokens.token(["sub": "ana"])
        func status(_ path: String) async throws -> Int {
            try await RawAnswer.exchange(port: port, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ana)\r\n").status
        }
        #expect(try await status("/v1/lists/users%2Fana%2Finbox") == 200)
        #expect(try await status("/v1/lists/public%2Fnews") == 404)

        try write(tokens.accessFile(rules: [["lists": "public/*", "grant": "read"]]))
        kill(server.processIdentifier, SIGHUP)
        #expect(try await read(errors, until: "read the access file").contains("read the access file"))
        #expect(try await status("/v1/lists/users%2Fana%2Finbox") == 404)
        #expect(try await status("/v1/lists/public%2Fnews") == 200)

        try write(Array("{not json".utf8))
        kill(server.processIdentifier, SIGHUP)
        #expect(try await read(errors, until: "was not read again").contains("the last one stays in force"))
        #expect(try await status("/v1/lists/public%2Fnews") == 200)
        server.terminate()
        server.waitUntilExit()
        #expect(server.terminationStatus == 0)
    }

    /// A usage error is one line on stderr and exit 64, before anything is opened; `--event-loops`
    /// takes 1 to 1024, and a server given more than its default runs that many loops (on Linux,
    /// its threads are counted) and serves.
    @Test(.timeLimit(.minutes(2))) func usageErrorsAreOneLineAndEventLoopsAreCounted() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.file("s.liststore")
        try await Store(path: db).commit(linearList(2), to: "l")
        for arguments in [["--event-loops", "0"], ["--event-loops", "1025"], ["--bogus"], ["--port", "70000"], ["--tls-cert", "a.pem"]] {
            let refused = try Self.refusal(["--db", db] + arguments)
            #expect(refused.status == 64, "\(arguments)")
            #expect(refused.message.filter { $0 == "\n" }.count == 1 && refused.message.hasPrefix("error: "), "\(arguments): \(refused.message)")
        }
        #expect(try Self.refusal(["--event-loops", "0"]).message.contains("--event-loops must be between 1 and 1024"))

        // Neither NIO's shared group (its threads are named otherwise) nor the default.
        let loops = 2 * ProcessInfo.processInfo.activeProcessorCount + 1
        let (server, output, _) = try Self.start(["--db", db, "--port", "0", "--event-loops", String(loops)])
        let line = try await Self.firstLine(of: output)
        let port = try #require(line.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }, "\(line)")
        for _ in 0..<loops {
            let health = try await RawAnswer.exchange(port: port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n")
            #expect(health.status == 200)
        }
        #if os(Linux)
        // NIO names a group's threads `NIO-ELT-<group>-#<loop>`.
        let tasks = "/proc/\(server.processIdentifier)/task"
        let names = try FileManager.default.contentsOfDirectory(atPath: tasks).compactMap {
            try? String(contentsOfFile: "\(tasks)/\($0)/comm", encoding: .utf8)
        }
        #expect(names.filter { $0.hasPrefix("NIO-ELT-") }.count == loops, "\(names)")
        #endif
        server.terminate()
        server.waitUntilExit()
        #expect(server.terminationStatus == 0)
    }

    @Test func aNonLoopbackHostNeedsATokenOrAnExplicitFlag() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.file("s.liststore")
        try await Store(path: db).commit(linearList(2), to: "l")

        var environment = ProcessInfo.processInfo.environment
        environment["LISTSTORE_TOKEN"] = nil
        let refused = try Self.refusal(["--db", db, "--host", "0.0.0.0", "--port", "0"], environment: environment)
        #expect(refused.status == 64)
        #expect(refused.message.filter { $0 == "\n" }.count == 1 && refused.message.contains("--token"), "\(refused.message)")

        let (allowed, output, errors) = try Self.start(
            ["--db", db, "--host", "0.0.0.0", "--port", "0", "--allow-unauthenticated"], environment: environment)
        let line = try await Self.firstLine(of: output)
        allowed.terminate()
        allowed.waitUntilExit()
        let warning = String(decoding: PipeIO.readAll(errors.fileHandleForReading), as: UTF8.self)
        #expect(line.contains("serving"), "\(line) \(warning)")
        #expect(warning.contains("warning:") && warning.contains("WITHOUT A TOKEN"))
        #expect(allowed.terminationStatus == 0)
    }
}
