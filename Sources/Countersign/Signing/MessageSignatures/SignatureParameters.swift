/// The parameters of one signature (RFC 9421 §2.3), in the order they are written.
public struct SignatureParameters: Equatable, Sendable {
    public var created: Int64?
    public var expires: Int64?
    public var nonce: String?
    public var algorithm: String?
    public var keyID: String?
    public var tag: String?

    public init(created: Int64? = nil, expires: Int64? = nil, nonce: String? = nil, algorithm: String? = nil, keyID: String? = nil, tag: String? = nil) {
        self.created = created
        self.expires = expires
        self.nonce = nonce
        self.algorithm = algorithm
        self.keyID = keyID
        self.tag = tag
    }

    /// created, expires, nonce, alg, keyid, tag: the order of §2.3's list.
    public var structured: StructuredParameters {
        var parameters = StructuredParameters()
        if let created { parameters["created"] = .integer(created) }
        if let expires { parameters["expires"] = .integer(expires) }
        if let nonce { parameters["nonce"] = .string(nonce) }
        if let algorithm { parameters["alg"] = .string(algorithm) }
        if let keyID { parameters["keyid"] = .string(keyID) }
        if let tag { parameters["tag"] = .string(tag) }
        return parameters
    }

    /// Reads them back from `Signature-Input`; an unknown parameter is kept out of these
    /// fields but still covered, since the base is built from the parameters as received.
    public init(_ parameters: StructuredParameters) throws {
        func integer(_ key: String) throws -> Int64? {
            switch parameters[key] {
            case nil: return nil
            case .integer(let value)?: return value
            default: throw SignatureError.invalidSignatureInput("\(key) is not an integer")
            }
        }
        func string(_ key: String) throws -> String? {
            switch parameters[key] {
            case nil: return nil
            case .string(let value)?: return value
            default: throw SignatureError.invalidSignatureInput("\(key) is not a string")
            }
        }
        self.init(created: try integer("created"), expires: try integer("expires"), nonce: try string("nonce"),
                  algorithm: try string("alg"), keyID: try string("keyid"), tag: try string("tag"))
    }
}
