import Crypto
import Foundation
import ListJSON
import CryptoExtras

/// Keys of every family a journal server's access file names, the JWKS document of their public
/// halves, and tokens signed by them (or forged): made by hand with swift-crypto, so that a test
/// can sign whatever header and payload it needs.
struct TestTokens: Sendable {
    let secret = Array("an HMAC secret of thirty-two bytes!!".utf8)
    let ec = P256.Signing.PrivateKey()
    let ed = Curve25519.Signing.PrivateKey()
    let rsa = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    /// How a token is signed.
    enum Signer {
        case hmac(kid: String?, secret: [UInt8]? = nil)
        case es256(kid: String?)
        case eddsa(kid: String?)
        case rs256(kid: String?)
        /// `alg: none` and no signature.
        case none(kid: String?)
    }

    /// The JWKS document of the keys: k-hmac (HS256), k-ec (ES256), k-ed (EdDSA), k-rsa (RS256).
    var jwks: JSONValue {
        let primitives = try! rsa.publicKey.getKeyPrimitives()
        let (n, e) = (primitives.modulus, primitives.publicExponent)
        let point = Array(ec.publicKey.rawRepresentation)
        return ["keys": [
            ["kty": "oct", "kid": "k-hmac", "alg": "HS256", "k": .string(Self.base64URL(secret))],
            ["kty": "EC", "kid": "k-ec", "alg": "ES256", "crv": "P-256",
             "x": .string(Self.base64URL(point.prefix(32))), "y": .string(Self.base64URL(point.suffix(32)))],
            ["kty": "OKP", "kid": "k-ed", "alg": "EdDSA", "crv": "Ed25519", "x": .string(Self.base64URL(ed.publicKey.rawRepresentation))],
            ["kty": "RSA", "kid": "k-rsa", "alg": "RS256", "n": .string(Self.base64URL(n)), "e": .string(Self.base64URL(e))],
        ]]
    }

    /// An access file with these keys, `rules` and the other members given.
    func accessFile(rules: JSONValue, extra: [(String, JSONValue)] = []) -> [UInt8] {
        var object: JSONObject = ["keys": jwks, "rules": rules]
        for (name, value) in extra { object[name] = value }
        return JSONValue.object(object).serializedBytes()
    }

    /// A token for `claims` (an `exp` an hour from now unless given), signed by `signer`.
    func token(_ claims: [String: JSONValue], by signer: Signer = .hmac(kid: "k-hmac"), withoutExpiry: Bool = false) -> String {
        var payload = JSONObject(uniqueKeysWithValues: claims.map { ($0.key, $0.value) })
        if payload["exp"] == nil, !withoutExpiry { payload["exp"] = .number(JSONNumber(Int(Date().timeIntervalSince1970) + 3600)) }
        let (alg, kid): (String, String?) =
            switch signer {
            case .hmac(let kid, _): ("HS256", kid)
            case .es256(let kid): ("ES256", kid)
            case .eddsa(let kid): ("EdDSA", kid)
            case .rs256(let kid): ("RS256", kid)
            case .none(let kid): ("none", kid)
            }
        var header: JSONObject = ["alg": .string(alg), "typ": "JWT"]
        if let kid { header["kid"] = .string(kid) }
        let input = Self.base64URL(JSONValue.object(header).serializedBytes()) + "." + Self.base64URL(JSONValue.object(payload).serializedBytes())
        return input + "." + Self.base64URL(signature(of: Array(input.utf8), by: signer))
    }

    func signature(of input: [UInt8], by signer: Signer) -> [UInt8] {
        switch signer {
        case .hmac(_, let key):
            return Array(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: key ?? secret)))
        case .es256:
            return Array(try! ec.signature(for: input).rawRepresentation)
        case .eddsa:
            return Array(try! ed.signature(for: input))
        case .rs256:
            return Array(try! rsa.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation)
        case .none:
            return []
        }
    }

    static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
