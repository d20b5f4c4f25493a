import Foundation
import ListDiffTestSupport
import ListStoreTestSupport
import ListSync
import Testing

/// `HTTPSource.CertificateAuthorities` reads the certificates of PEM text, and refuses text that
/// holds none or one it cannot read, naming where it came from.
/// Its tests make certificates with `openssl`, which blocks: on threads of their own (`.blockingWaits`).
@Suite(.blockingWaits) struct CertificateAuthoritiesTests {
    @Test func everyCertificateBlockIsReadAndTextAroundThemIsIgnored() throws {
        let directory = try TemporaryDirectory()
        let one = try Data(contentsOf: URL(fileURLWithPath: TestCertificates(in: directory).authority))
        let otherDirectory = try TemporaryDirectory()
        let other = try Data(contentsOf: URL(fileURLWithPath: TestCertificates(in: otherDirectory).authority))
        let single = try HTTPSource.CertificateAuthorities(pem: [UInt8](one))
        #expect(try HTTPSource.CertificateAuthorities(pemFile: directory.file("ca.pem")) == single)
        let both = try HTTPSource.CertificateAuthorities(pem: Array("a comment\n".utf8) + [UInt8](one) + Array("\n".utf8) + [UInt8](other))
        #expect(both != single)
        #expect(try HTTPSource.CertificateAuthorities(pem: [UInt8](other) + [UInt8](one)) != both)  // order is kept
    }

    @Test func textWithoutACertificateOrWithOneThatCannotBeReadIsRefused() throws {
        func refusal(_ text: String) -> String? {
            do {
                _ = try HTTPSource.CertificateAuthorities(pem: Array(text.utf8))
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal("")?.contains("the PEM text holds no PEM certificate") == true)
        #expect(refusal("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")?.contains("holds no PEM certificate") == true)
        #expect(refusal("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n")?.contains("not base64") == true)
        #expect(refusal("-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n")?.contains("cannot be read") == true)
        #expect(throws: (any Error).self) { try HTTPSource.CertificateAuthorities(pemFile: "/nonexistent/ca.pem") }
    }
}
