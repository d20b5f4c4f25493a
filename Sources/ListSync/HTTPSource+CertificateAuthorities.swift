import Foundation
import NIOSSL

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
    /// On Linux every source sends its requests through AsyncHTTPClient (SwiftNIO); on Apple
    /// platforms a source sends them through URLSession, unless it is given authorities, then through
    /// AsyncHTTPClient too. The limits, redirect rules and errors are the same either way.
    public struct CertificateAuthorities: Sendable, Hashable {
        /// The authorities' certificates.
        let certificates: [NIOSSLCertificate]
        /// Their DER bytes, one after the other: what makes two sets the same.
        let key: [UInt8]

        /// The certificates of a PEM file (one or more `BEGIN CERTIFICATE` blocks).
        /// - Throws: `SyncError.transport` when the file cannot be read or holds no certificate.
        public init(pemFile path: String) throws {
            guard let bytes = FileManager.default.contents(atPath: path) else {
                throw SyncError.transport("cannot read the certificate authority file \(path)")
            }
            try self.init(pem: [UInt8](bytes), from: path)
        }

        /// The certificates of PEM text.
        /// - Throws: `SyncError.transport` when it holds no certificate.
        public init(pem: [UInt8]) throws {
            try self.init(pem: pem, from: "the PEM text")
        }

        private init(pem: [UInt8], from source: String) throws {
            let certificates = (try? NIOSSLCertificate.fromPEMBytes(pem)) ?? []
            guard !certificates.isEmpty else { throw SyncError.transport("\(source) holds no PEM certificate") }
            self.certificates = certificates
            key = try certificates.flatMap { try $0.toDERBytes() }
        }

        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.key == rhs.key }
        public func hash(into hasher: inout Hasher) { hasher.combine(key) }
    }
}
