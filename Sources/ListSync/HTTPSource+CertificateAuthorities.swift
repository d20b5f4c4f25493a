import Foundation

#if canImport(Darwin)
import Security
#else
import NIOSSL
#endif

extension HTTPSource {
    /// The certificate authorities an `https` server's certificate must be signed by, in place of
    /// the system's: for a server whose certificate no public authority signed, such as one made for
    /// `liststore serve --tls-cert` by a company's own authority or by `openssl` for a test.
    ///
    /// ```swift
    /// var source = try HTTPSource("https://sync.internal:8443", token: token)
    /// source.certificateAuthorities = try .init(pemFile: "/etc/liststore/ca.pem")
    /// ```
    ///
    /// On Apple platforms a source sends its requests through URLSession, which checks the
    /// server's certificate against these authorities only (the authority check runs in the task's
    /// delegate; this code is not built on Linux). Elsewhere it sends them through AsyncHTTPClient
    /// (SwiftNIO), whose TLS configuration trusts these authorities only. The limits, redirect rules
    /// and errors are the same either way.
    public struct CertificateAuthorities: Sendable, Hashable {
        /// The authorities' certificates, DER bytes each.
        let der: [[UInt8]]
        #if !canImport(Darwin)
        /// The same certificates, read by NIOSSL.
        let nioCertificates: [NIOSSLCertificate]
        #endif

        /// The certificates of a PEM file (one or more `BEGIN CERTIFICATE` blocks).
        /// - Throws: `SyncError.transport` when the file cannot be read, holds no certificate, or
        ///   holds one that cannot be read.
        /// - Complexity: O(size of the file).
        public init(pemFile path: String) throws {
            guard let bytes = FileManager.default.contents(atPath: path) else {
                throw SyncError.transport("cannot read the certificate authority file \(path)")
            }
            try self.init(pem: [UInt8](bytes), from: path)
        }

        /// The certificates of PEM text.
        /// - Throws: `SyncError.transport` when it holds no certificate, or one that cannot be read.
        /// - Complexity: O(size of the text).
        public init(pem: [UInt8]) throws {
            try self.init(pem: pem, from: "the PEM text")
        }

        private init(pem: [UInt8], from source: String) throws {
            let blocks = Self.certificateBlocks(String(decoding: pem, as: UTF8.self))
            guard !blocks.isEmpty else { throw SyncError.transport("\(source) holds no PEM certificate") }
            var der = [[UInt8]]()
            for block in blocks {
                guard let bytes = Data(base64Encoded: block, options: .ignoreUnknownCharacters), !bytes.isEmpty else {
                    throw SyncError.transport("\(source) holds a PEM certificate that is not base64")
                }
                der.append([UInt8](bytes))
            }
            #if canImport(Darwin)
            guard der.allSatisfy({ SecCertificateCreateWithData(nil, Data($0) as CFData) != nil }) else {
                throw SyncError.transport("\(source) holds a certificate that cannot be read")
            }
            #else
            do {
                nioCertificates = try der.map { try NIOSSLCertificate(bytes: $0, format: .der) }
            } catch {
                throw SyncError.transport("\(source) holds a certificate that cannot be read: \(error)")
            }
            #endif
            self.der = der
        }

        /// The base64 text of each `BEGIN CERTIFICATE` block of `pem`, in order.
        static func certificateBlocks(_ pem: String) -> [String] {
            let (begin, end) = ("-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----")
            var blocks = [String]()
            var rest = pem[...]
            while let opening = rest.range(of: begin), let closing = rest.range(of: end, range: opening.upperBound..<rest.endIndex) {
                blocks.append(String(rest[opening.upperBound..<closing.lowerBound]))
                rest = rest[closing.upperBound...]
            }
            return blocks
        }

        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.der == rhs.der }
        public func hash(into hasher: inout Hasher) { hasher.combine(der) }
    }
}
