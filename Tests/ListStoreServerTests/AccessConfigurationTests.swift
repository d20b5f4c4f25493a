import Foundation
import ListJSON
import ListStoreServer
import Testing

/// Access files and the tokens they accept: every key family, and tokens forged every known way.
@Suite struct AccessConfigurationTests {
    static let tokens = TestTokens()
    static let rules: JSONValue = [["lists": "users/{sub}/**", "grant": "write"], ["lists": "public/*", "grant": "read"]]

    static func access(_ extra: [(String, JSONValue)] = []) async throws -> AccessConfiguration {
        try await AccessConfiguration(json: tokens.accessFile(rules: rules, extra: extra))
    }

    @Test func tokensOfEveryKeyFamilyVerify() async throws {
        let access = try await Self.access()
        let signers: [TestTokens.Signer] = [.hmac(kid: "k-hmac"), .es256(kid: "k-ec"), .eddsa(kid: "k-ed"), .rs256(kid: "k-rsa")]
        for signer in signers {
            let token = try await access.verify(Self.tokens.token(["sub": "ana", "teams": ["red", "blue"], "n": 3], by: signer))
            #expect(token.subject == "ana", "\(signer)")
            #expect(token.claims["teams"] == ["red", "blue"] && token.claims["n"] == nil)
            #expect(access.grant(on: "users/ana/inbox", to: token) == .write)
            #expect(access.grant(on: "users/bob/inbox", to: token) == nil)
        }
        // Without a kid, each key is tried.
        for signer in [TestTokens.Signer.hmac(kid: nil), .es256(kid: nil), .eddsa(kid: nil)] {
            #expect(try await access.verify(Self.tokens.token(["sub": "ana"], by: signer)).subject == "ana")
        }
    }

    @Test func forgedTokensAreRefused() async throws {
        let access = try await Self.access([("issuer", "https://auth.example"), ("audience", "liststore"), ("leeway", 5)])
        let tokens = Self.tokens
        let good: [String: JSONValue] = ["sub": "ana", "iss": "https://auth.example", "aud": ["other", "liststore"]]
        _ = try await access.verify(tokens.token(good))
        let now = Int(Date().timeIntervalSince1970)
        var expired = good
        expired["exp"] = .number(JSONNumber(now - 10))
        var early = good
        early["nbf"] = .number(JSONNumber(now + 60))
        var otherIssuer = good
        otherIssuer["iss"] = "https://evil.example"
        var otherAudience = good
        otherAudience["aud"] = "something-else"
        let publicKeyAsSecret = Array(tokens.ec.publicKey.derRepresentation)
        let valid = tokens.token(good)
        let parts = valid.split(separator: ".").map(String.init)
        let tampered = parts[0] + "." + TestTokens.base64URL(Array(#"{"sub":"bob","exp":9999999999,"iss":"https://auth.example","aud":"liststore"}"#.utf8)) + "." + parts[2]
        let forged: [(String, String, String)] = [
            (tokens.token(expired), "expired", "expired"),
            (tokens.token(good, withoutExpiry: true), "no exp", "no expiry"),
            (tokens.token(good, by: .hmac(kid: "k-hmac", secret: Array("another secret entirely, 32 bytes".utf8))), "wrong key", "signature"),
            (tokens.token(good, by: .none(kid: "k-hmac")), "alg none", "signature"),
            (tokens.token(good, by: .none(kid: nil)), "alg none without kid", "signature"),
            (tokens.token(good, by: .hmac(kid: "k-ec", secret: publicKeyAsSecret)), "HMAC keyed with the EC public key", "signature"),
            (tokens.token(good, by: .hmac(kid: "k-rsa", secret: Array(tokens.rsa.publicKey.derRepresentation))), "HMAC keyed with the RSA public key", "signature"),
            (tampered, "tampered payload", "signature"),
            (tokens.token(otherIssuer), "wrong iss", "issuer"),
            (tokens.token(otherAudience), "wrong aud", "audience"),
            (tokens.token(early), "future nbf", "not valid yet"),
            (tokens.token(good, by: .hmac(kid: "k-unknown")), "unknown kid", "key id"),
            ("not.a.token", "garbage", "not a JSON Web Token"),
            ("", "empty", "not a JSON Web Token"),
        ]
        for (token, what, reason) in forged {
            do {
                _ = try await access.verify(token)
                Issue.record("\(what): accepted")
            } catch let refusal as AccessRefusal {
                #expect(refusal.description.contains(reason), "\(what): \(refusal)")
                #expect(!refusal.description.contains("thirty-two"), "\(what): the reason names no key material")
            }
        }
        // Within the leeway, an expired token still passes.
        var justExpired = good
        justExpired["exp"] = .number(JSONNumber(now - 2))
        _ = try await access.verify(tokens.token(justExpired))
    }

    /// A token verified once is known until it expires: its expiry is still checked on every use.
    @Test func aKnownTokenStillExpires() async throws {
        let access = try await Self.access([("leeway", 0)])
        let now = Date()
        let token = Self.tokens.token(["sub": "ana", "exp": .number(JSONNumber(Int(now.timeIntervalSince1970) + 100))])
        #expect(try await access.verify(token, now: now).subject == "ana")
        #expect(try await access.verify(token, now: now.addingTimeInterval(50)).subject == "ana")
        await #expect(throws: AccessRefusal.self) { try await access.verify(token, now: now.addingTimeInterval(101)) }
    }

    @Test func badAccessFilesAreRefusedNamingWhatIsWrong() async throws {
        let tokens = Self.tokens
        let cases: [([UInt8], String)] = [
            (Array("not json".utf8), "not a JSON object"),
            (tokens.accessFile(rules: [["lists": "users/{sub", "grant": "read"]]), "rule 1 ('users/{sub')"),
            (tokens.accessFile(rules: [["lists": "a/*", "grant": "read"], ["lists": "b/*", "grant": "owner"]]), "rule 2 ('b/*'): grant 'owner'"),
            (tokens.accessFile(rules: [["grant": "read"]]), "rule 1 has no 'lists'"),
            (JSONValue.object(["keys": ["keys": [["kty": "XYZ", "kid": "k9"]]], "rules": []]).serializedBytes(), "key 1 (kid k9): unknown key type 'XYZ'"),
            (JSONValue.object(["keys": ["keys": [["kty": "oct", "kid": "k1"]]], "rules": []]).serializedBytes(), "key 1 (kid k1)"),
            (JSONValue.object(["keys": ["keys": [["kty": "EC", "kid": "k2", "crv": "P-256", "x": "AA", "y": "AA", "alg": "ES256"]]], "rules": []]).serializedBytes(), "key 1 (kid k2)"),
            (JSONValue.object(["rules": []]).serializedBytes(), "names no keys"),
            (tokens.accessFile(rules: [], extra: [("leeway", -1)]), "leeway"),
            (tokens.accessFile(rules: [], extra: [("colour", "blue")]), "unknown member 'colour'"),
        ]
        for (file, problem) in cases {
            do {
                _ = try await AccessConfiguration(json: file)
                Issue.record("accepted: \(problem)")
            } catch let error as AccessConfiguration.Problem {
                #expect(error.description.contains(problem), "\(error)")
                #expect(!error.description.contains("\n"))
            }
        }
    }

    @Test func aKeysFileIsReadBesideTheAccessFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("access-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(Self.tokens.jwks.serializedBytes()).write(to: directory.appendingPathComponent("jwks.json"))
        let file = directory.appendingPathComponent("auth.json")
        try Data(JSONValue.object(["keysFile": "jwks.json", "rules": Self.rules]).serializedBytes()).write(to: file)
        let access = try await AccessConfiguration(contentsOfFile: file.path)
        #expect(try await access.verify(Self.tokens.token(["sub": "ana"], by: .es256(kid: "k-ec"))).subject == "ana")
    }
}
