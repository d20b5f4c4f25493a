import Crypto
import Foundation
import JWTKit
import ListJSON
import ListStoreCore

/// Who may do what on a journal server: the keys that sign users' tokens (a JWKS document), what a
/// token must say (`issuer`, `audience`, with `leeway` for clocks that differ), and the rules that
/// grant lists to it. A server with an access configuration still serves its service token
/// (`JournalServer.Configuration.token`) with full access.
///
/// It is read from one JSON document, the file of `liststore serve --auth FILE`; its members, the
/// keys it takes and its rules: <doc:RunningAServer#Users-and-access>.
///
/// ```swift
/// let access = try await AccessConfiguration(contentsOfFile: "/etc/liststore/auth.json")
/// let token = try await access.verify(bearer)   // AccessToken, or AccessRefusal
/// ```
///
/// A token is verified once and known until it expires (its expiry is checked on every request);
/// the long polls and event streams under way when the file is read again ask the new
/// configuration whether it still accepts their tokens (`recheck(_:now:)`).
public struct AccessConfiguration: Sendable {
    /// What the token's `iss` must be, when set.
    public var issuer: String?
    /// What the token's `aud` must be or hold, when set.
    public var audience: String?
    /// How far clocks may differ: `exp` and `nbf` are honoured this much late and early.
    public var leeway: Duration
    /// The rules, in the file's order.
    public var rules: [AccessRule]
    /// The verification keys, by their `kid`s (a key without one gets `#` and its index), each with
    /// the digest of its JWK but its `kid` (what a token verified by it remembers).
    private let keys: [(kid: String, collection: JWTKeyCollection, digest: [UInt8])]
    /// The tokens this configuration verified, until they expire: a client sends the same token
    /// with many requests, and its signature is checked once (expiry on every request).
    private let verified = VerifiedTokens()

    /// Reads the access document at `path`.
    /// - Throws: `AccessConfiguration.Problem`, one line naming the key or rule at fault (and no
    ///   key material).
    /// - Complexity: O(size of the document).
    public init(contentsOfFile path: String) async throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Problem("cannot read the access file \(path)")
        }
        try await self.init(json: Array(data), directory: (path as NSString).deletingLastPathComponent)
    }

    /// Reads an access document; `directory` is where a relative `keysFile` is.
    /// - Throws: `AccessConfiguration.Problem`, one line naming what is wrong.
    /// - Complexity: O(size of the document).
    public init(json: [UInt8], directory: String = ".") async throws {
        guard let document = try? JSONValue(parsing: json), document.objectValue != nil else {
            throw Problem("the access file is not a JSON object")
        }
        for name in document.objectValue!.keys where !["keys", "keysFile", "issuer", "audience", "leeway", "rules"].contains(name) {
            throw Problem("the access file has an unknown member '\(name)'")
        }
        var jwks = document["keys"]
        if let file = document["keysFile"]?.stringValue {
            let path = file.hasPrefix("/") ? file : directory + "/" + file
            guard let data = FileManager.default.contents(atPath: path), let value = try? JSONValue(parsing: Array(data)) else {
                throw Problem("cannot read the JWKS document \(path)")
            }
            jwks = value
        }
        guard let list = jwks?["keys"]?.arrayValue, !list.isEmpty else {
            throw Problem("the access file names no keys: 'keys' must be a JWKS document {\"keys\": [...]}, or 'keysFile' its path")
        }
        var keys: [(kid: String, collection: JWTKeyCollection, digest: [UInt8])] = []
        for (index, key) in list.enumerated() {
            let kid = key["kid"]?.stringValue ?? "#\(index + 1)"
            keys.append((kid, try await Self.collection(for: key, named: "key \(index + 1) (kid \(kid))"), Self.digest(of: key)))
        }
        self.keys = keys
        issuer = try Self.string(document, "issuer")
        audience = try Self.string(document, "audience")
        if let leeway = document["leeway"] {
            guard let seconds = leeway.intValue, seconds >= 0 else { throw Problem("'leeway' must be a number of seconds ≥ 0") }
            self.leeway = .seconds(seconds)
        } else {
            leeway = .seconds(30)
        }
        guard let rules = document["rules"]?.arrayValue else { throw Problem("the access file has no 'rules' array") }
        self.rules = try rules.enumerated().map { index, rule in
            let text = rule["lists"]?.stringValue
            let name = "rule \(index + 1)" + (text.map { " ('\($0)')" } ?? "")
            guard let text else { throw Problem("\(name) has no 'lists' pattern") }
            let pattern: ListPattern
            do {
                pattern = try ListPattern(text)
            } catch {
                throw Problem("\(name): \(error)")
            }
            let grantName = rule["grant"]?.stringValue ?? "(none)"
            guard let grant = AccessGrant(name: grantName) else {
                throw Problem("\(name): grant '\(grantName)' is not one of read, write, admin")
            }
            return AccessRule(lists: pattern, grant: grant)
        }
    }

    /// `token` when this configuration verified it already and it has not expired at `now`; `nil`
    /// when `verify(_:now:)` must: the answer that needs no wait.
    /// - Complexity: O(size of the token).
    func knownToken(_ token: String, now: Date = Date()) -> AccessToken? {
        guard let known = verified.token(token), known.expiresAt > now else { return nil }
        return known
    }

    /// Verifies a bearer token: its signature with the key its `kid` names, then `exp` (required),
    /// `nbf`, `iss` and `aud`, at `now`.
    ///
    /// ```swift
    /// let token = try await access.verify(bearer)
    /// print(token.subject ?? "-", token.expiresAt)
    /// ```
    /// - Throws: `AccessRefusal`, whose reason names no key material.
    /// - Complexity: for a token this configuration has not verified yet, one signature check (one
    ///   per key for a token without `kid`) plus O(size of the token); then O(size of the token).
    public func verify(_ token: String, now: Date = Date()) async throws -> AccessToken {
        if let known = verified.token(token) {
            guard known.expiresAt > now else { throw AccessRefusal("the token has expired") }
            return known
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Self.base64URL(parts[0]), let header = try? JSONValue(parsing: headerBytes),
            header.objectValue != nil, let payloadBytes = Self.base64URL(parts[1]),
            let payload = try? JSONValue(parsing: payloadBytes), payload.objectValue != nil
        else { throw AccessRefusal("the token is not a JSON Web Token") }
        let kid: String?
        let candidates: [(kid: String, collection: JWTKeyCollection, digest: [UInt8])]
        if let value = header["kid"] {
            guard let value = value.stringValue, let key = keys.first(where: { $0.kid == value }) else {
                throw AccessRefusal("the token's key id is not one of the server's keys")
            }
            (kid, candidates) = (value, [key])
        } else {
            (kid, candidates) = (nil, keys)
        }
        var signer: [UInt8]?
        for key in candidates where signer == nil {
            if (try? await key.collection.verify(token, as: SignedPayload.self)) != nil { signer = key.digest }
        }
        guard let signer else { throw AccessRefusal("the token's signature does not verify") }
        guard let exp = payload["exp"]?.doubleValue else { throw AccessRefusal("the token has no expiry (exp)") }
        var facts = AccessToken.Facts(kid: kid, key: signer, expiry: exp, notBefore: nil, issuer: payload["iss"]?.stringValue)
        if let nbf = payload["nbf"] {
            guard let nbf = nbf.doubleValue else { throw AccessRefusal("the token is not valid yet (nbf)") }
            facts.notBefore = nbf
        }
        facts.audiences = payload["aud"].map { $0.stringValue.map { [$0] } ?? ($0.arrayValue ?? []).compactMap(\.stringValue) } ?? []
        try check(facts, at: now)
        var claims: [String: [String]] = [:]
        // `sub` names one user: a token whose `sub` is not a string has none for the rules (and
        // cannot write, see `JournalRoutes.author(of:)`).
        for (name, value) in payload.objectValue! where name != "sub" || value.stringValue != nil {
            if let string = value.stringValue {
                claims[name] = [string]
            } else if let array = value.arrayValue, array.allSatisfy({ $0.stringValue != nil }) {
                claims[name] = array.compactMap(\.stringValue)
            }
        }
        var verifiedToken = AccessToken(
            subject: payload["sub"]?.stringValue, claims: claims,
            expiresAt: Date(timeIntervalSince1970: exp + Double(leeway.components.seconds)))
        verifiedToken.facts = facts
        verified.keep(verifiedToken, for: token)
        return verifiedToken
    }

    /// Refuses the facts of a token whose signature verified, unless they are what this
    /// configuration asks at `now`: not expired, valid already, the issuer and audience asked.
    private func check(_ facts: AccessToken.Facts, at now: Date) throws {
        let time = now.timeIntervalSince1970
        let leeway = Double(leeway.components.seconds)
        guard facts.expiry + leeway > time else { throw AccessRefusal("the token has expired") }
        if let nbf = facts.notBefore, nbf - leeway > time { throw AccessRefusal("the token is not valid yet (nbf)") }
        if let issuer, facts.issuer != issuer { throw AccessRefusal("the token's issuer is not this server's") }
        if let audience, !facts.audiences.contains(audience) { throw AccessRefusal("the token's audience is not this server") }
    }

    /// `token`, verified by the configuration in force before, as this one would verify it now,
    /// without checking its signature anew: the key that verified it must be one of this
    /// configuration's (the same JWK, under the token's `kid` if any), and its claims must pass.
    /// - Throws: `AccessRefusal` saying why; a token made with `AccessToken`'s initializer (no
    ///   configuration verified it) is refused.
    /// - Complexity: O(keys + size of the token's claims).
    func recheck(_ token: AccessToken, now: Date = Date()) throws -> AccessToken {
        guard let facts = token.facts else { throw AccessRefusal("the token was not verified by the server's keys") }
        if let kid = facts.kid {
            guard let key = keys.first(where: { $0.kid == kid }) else {
                throw AccessRefusal("the token's key id is not one of the server's keys")
            }
            guard key.digest == facts.key else { throw AccessRefusal("the token's signature does not verify") }
        } else {
            guard keys.contains(where: { $0.digest == facts.key }) else { throw AccessRefusal("the token's signature does not verify") }
        }
        try check(facts, at: now)
        var rechecked = token
        rechecked.expiresAt = Date(timeIntervalSince1970: facts.expiry + Double(leeway.components.seconds))
        return rechecked
    }

    /// The highest grant of the rules on `list` for `token`; `nil`: no access.
    /// - Complexity: that of `AccessRule.grant(_:for:claims:)`.
    public func grant(on list: String, to token: AccessToken) -> AccessGrant? {
        AccessRule.grant(rules, for: list, claims: token.claims)
    }

    /// What is wrong with an access document, in one line.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        /// The line.
        public let description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: Internals

    /// What jwt-kit decodes of a payload: nothing (the claims are read from the verified JSON).
    private struct SignedPayload: JWTPayload {
        init(from decoder: any Decoder) throws {}
        func encode(to encoder: any Encoder) throws {}
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// A key collection holding the JWK `key` alone, as its default key.
    private static func collection(for key: JSONValue, named name: String) async throws -> JWTKeyCollection {
        let collection = JWTKeyCollection()
        let type = key["kty"]?.stringValue ?? "(none)"
        switch type {
        case "oct":
            guard let secret = key["k"]?.stringValue.flatMap({ base64URL($0[...]) }), !secret.isEmpty else {
                throw Problem("\(name): an oct key needs its secret in 'k' (base64url)")
            }
            let digest: DigestAlgorithm
            switch key["alg"]?.stringValue ?? "HS256" {
            case "HS256": digest = .sha256
            case "HS384": digest = .sha384
            case "HS512": digest = .sha512
            case let other: throw Problem("\(name): algorithm '\(other)' is not one of HS256, HS384, HS512 for an oct key")
            }
            await collection.add(hmac: HMACKey(from: secret), digestAlgorithm: digest)
        case "RSA", "EC", "OKP":
            var object = key.objectValue!
            object["kid"] = .string("key")
            do {
                let jwk = try JSONDecoder().decode(JWK.self, from: Data(JSONValue.object(object).serializedBytes()))
                try await collection.add(jwk: jwk, isDefault: true)
            } catch {
                throw Problem("\(name): not a usable \(type) key (\(type == "RSA" ? "n, e" : "crv, x\(type == "EC" ? ", y" : "")") and 'alg' as JWKS says)")
            }
        default:
            throw Problem("\(name): unknown key type '\(type)' (kty must be oct, RSA, EC or OKP)")
        }
        return collection
    }

    /// The SHA-256 digest of a JWK without its `kid`: the key, whatever it is named.
    private static func digest(of key: JSONValue) -> [UInt8] {
        var object = key.objectValue ?? [:]
        object["kid"] = nil
        return Array(SHA256.hash(data: JSONValue.object(object).serializedBytes()))
    }

    private static func string(_ document: JSONValue, _ name: String) throws -> String? {
        guard let value = document[name], !value.isNull else { return nil }
        guard let string = value.stringValue else { throw Problem("'\(name)' must be a string") }
        return string
    }

    /// The bytes of base64url text (padding optional); `nil` when it is not base64url.
    static func base64URL(_ text: Substring) -> [UInt8]? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "=") }) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 = base64.trimmingCharacters(in: ["="])
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map(Array.init)
    }
}

/// The tokens a configuration verified (at most 10,000, so that many users' tokens cannot grow the
/// server: when it is full, the expired ones go, then all).
private final class VerifiedTokens: Sendable {
    private let tokens = _Locked([String: AccessToken]())
    private static let capacity = 10_000

    func token(_ text: String) -> AccessToken? {
        tokens.withLock { $0[text] }
    }

    func keep(_ token: AccessToken, for text: String) {
        tokens.withLock { tokens in
            if tokens.count >= Self.capacity {
                let now = Date()
                tokens = tokens.filter { $0.value.expiresAt > now }
                if tokens.count >= Self.capacity { tokens.removeAll(keepingCapacity: true) }
            }
            tokens[text] = token
        }
    }
}

/// A user's verified token: who it is (`sub`), the claims rules may name, and when it stops
/// being accepted.
public struct AccessToken: Sendable, Hashable {
    /// The token's `sub`, which the journal records as the author of its commits and pushes; `nil`
    /// when it has none or it is not a string: it may not write then (see <doc:RunningAServer>).
    public var subject: String?
    /// Each claim whose value is a string or an array of strings, as its strings.
    public var claims: [String: [String]]
    /// When the token expires, leeway included.
    public var expiresAt: Date
    /// What the configuration that verified the token found in it (`nil` for a token made with the
    /// initializer): what `AccessConfiguration.recheck(_:now:)` asks of it.
    var facts: Facts?

    /// What a configuration checked of a token whose signature it verified.
    struct Facts: Sendable, Hashable {
        /// The `kid` of the token's header, if it has one.
        var kid: String?
        /// The digest of the key that verified its signature (see `AccessConfiguration`).
        var key: [UInt8]
        /// Its `exp` and `nbf`, in seconds since 1970.
        var expiry: Double
        var notBefore: Double?
        /// Its `iss`, when a string, and the strings of its `aud`.
        var issuer: String?
        var audiences: [String] = []
    }

    /// A token's identity. - Complexity: O(1).
    public init(subject: String?, claims: [String: [String]], expiresAt: Date) {
        self.subject = subject
        self.claims = claims
        self.expiresAt = expiresAt
    }

    /// The longest a token is taken to last: its `exp` may be any number (1e21, the largest
    /// double, one that reads as infinity), and the waits it bounds are durations and instants of
    /// a clock, which cannot hold such numbers.
    static let longestLifetime = Duration.seconds(100 * 365 * 86_400)

    /// How long the token is still accepted after `now`: zero once it expired, and at most
    /// `longestLifetime` however far its expiry. The one place a long poll's or an event stream's
    /// end is computed from the token.
    /// - Complexity: O(1).
    func lifetime(after now: Date = Date()) -> Duration {
        let seconds = expiresAt.timeIntervalSince(now)
        // Not a number, or not later than now: nothing left.
        guard seconds > 0 else { return .zero }
        let longest = Double(Self.longestLifetime.components.seconds)
        return seconds < longest ? .seconds(seconds) : Self.longestLifetime
    }
}

/// Why a token is refused: answered 401 with `WWW-Authenticate: Bearer error="invalid_token"`. The
/// reason never names key material.
public struct AccessRefusal: Error, Sendable, CustomStringConvertible {
    /// The reason, one line.
    public let description: String
    init(_ description: String) { self.description = description }
}
