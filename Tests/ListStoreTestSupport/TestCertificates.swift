import Foundation
import ListStore

/// A certificate authority and a certificate it signed for 127.0.0.1 and localhost, made by
/// `openssl` for one test, as PEM files in a temporary directory.
public struct TestCertificates: Sendable {
    /// The authority's certificate (what a client trusts).
    public let authority: String
    /// The server's certificate.
    public let chain: String
    /// The server's private key.
    public let key: String

    public init(in directory: TemporaryDirectory) throws {
        authority = directory.file("ca.pem")
        chain = directory.file("server.pem")
        key = directory.file("server.key")
        let caKey = directory.file("ca.key")
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"]
        try Self.run("openssl", ["req", "-x509"] + ec + ["-keyout", caKey, "-out", authority, "-subj", "/CN=liststore test CA"])
        try Self.run(
            "openssl",
            ["req", "-x509"] + ec + [
                "-CA", authority, "-CAkey", caKey, "-keyout", key, "-out", chain, "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-addext", "basicConstraints=critical,CA:FALSE",
            ])
    }

    /// A certificate for 127.0.0.1 that this authority signed for one day of 2020, expired long
    /// since (`openssl ca`, the one tool of Debian's OpenSSL that sets a certificate's dates): the
    /// paths of its PEM file and of its key.
    public func expired(in directory: TemporaryDirectory) throws -> (chain: String, key: String) {
        let (chain, key, request) = (directory.file("expired.pem"), directory.file("expired.key"), directory.file("expired.csr"))
        let database = directory.file("ca-database")
        try FileManager.default.createDirectory(atPath: database, withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: database + "/index.txt"))
        try Data("01\n".utf8).write(to: URL(fileURLWithPath: database + "/serial"))
        let config = directory.file("ca.cnf")
        try Data(
            """
                [ca]
                default_ca = test
                [test]
                database = \(database)/index.txt
                new_certs_dir = \(database)
                serial = \(database)/serial
                default_md = sha256
                policy = any
                unique_subject = no
                copy_extensions = copy
                [any]
                commonName = supplied

                """.utf8
        ).write(to: URL(fileURLWithPath: config))
        try Self.run(
            "openssl",
            ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=127.0.0.1",
             "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", key, "-out", request])
        try Self.run(
            "openssl",
            ["ca", "-batch", "-config", config, "-cert", authority, "-keyfile", directory.file("ca.key"),
             "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", "-notext", "-in", request, "-out", chain])
        return (chain, key)
    }

    /// Runs `tool` (found on PATH) with `arguments`; returns its exit status and standard output.
    /// - Throws: `StoreError` `.io` when `check` and it exits with another status than 0.
    @discardableResult
    public static func run(_ tool: String, _ arguments: [String], check: Bool = true) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.runWhenDescriptorsAllow()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if check, process.terminationStatus != 0 {
            throw StoreError(.io, "\(tool) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
