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

    @Test func aNonLoopbackHostNeedsATokenOrAnExplicitFlag() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.file("s.liststore")
        try await Store(path: db).commit(linearList(2), to: "l")

        var environment = ProcessInfo.processInfo.environment
        environment["LISTSTORE_TOKEN"] = nil
        let refused = Process()
        refused.executableURL = Self.binary
        refused.arguments = ["--db", db, "--host", "0.0.0.0", "--port", "0"]
        refused.environment = environment
        let refusedError = Pipe()
        refused.standardError = refusedError
        refused.standardOutput = Pipe()
        refused.endsWithTestProcess()
        try refused.run()
        let message = String(decoding: PipeIO.readAll(refusedError.fileHandleForReading), as: UTF8.self)
        refused.waitUntilExit()
        #expect(refused.terminationStatus == 64)
        #expect(message.filter { $0 == "\n" }.count == 1 && message.contains("--token"), "\(message)")

        let allowed = Process()
        allowed.executableURL = Self.binary
        allowed.arguments = ["--db", db, "--host", "0.0.0.0", "--port", "0", "--allow-unauthenticated"]
        allowed.environment = environment
        let output = Pipe()
        let errors = Pipe()
        allowed.standardOutput = output
        allowed.standardError = errors
        allowed.endsWithTestProcess()
        try allowed.run()
        let line = try await RawConnection.run { () -> String in
            var data = Data()
            while !data.contains(UInt8(ascii: "\n")) {
                let chunk = PipeIO.readSome(output.fileHandleForReading)
                if chunk.isEmpty { break }
                data += chunk
            }
            return String(decoding: data, as: UTF8.self)
        }
        allowed.terminate()
        allowed.waitUntilExit()
        let warning = String(decoding: PipeIO.readAll(errors.fileHandleForReading), as: UTF8.self)
        #expect(line.contains("serving"), "\(line) \(warning)")
        #expect(warning.contains("warning:") && warning.contains("WITHOUT A TOKEN"))
        #expect(allowed.terminationStatus == 0)
    }
}
