import CountersignAuth
import CountersignHTTP
import CountersignSupport

/// Signs the request heads Countersign sends to one host (`hosts.*.sign`, format rfc9421): the
/// head as it goes on the wire is read back, the configured components it has are covered, and
/// `Signature-Input` / `Signature` are added under the label with a fresh `created` (and
/// `nonce`) for every attempt, so a replay after a challenge carries a signature of its own.
public final class RequestSigner: Sendable {
    public let key: MessageSigningKey
    public let keyID: String
    public let label: String
    public let components: [SignatureComponent]
    /// The digest put in `Content-Digest` for a request with a body (nil: none).
    public let digest: ContentDigester.Algorithm?
    public let expiresIn: Int64?
    public let nonce: Bool
    public let tag: String?
    /// The byte-level form of this signature, when every component allows one.
    let plan: RequestSignaturePlan?

    public init(key: MessageSigningKey, keyID: String, label: String, components: [SignatureComponent],
                digest: ContentDigester.Algorithm?, expiresIn: Int64?, nonce: Bool, tag: String?) {
        self.key = key
        self.keyID = keyID
        self.label = label
        self.components = components
        self.digest = digest
        self.expiresIn = expiresIn
        self.nonce = nonce
        self.tag = tag
        plan = RequestSignaturePlan(label: label, components: components, algorithm: key.algorithm, keyID: keyID, tag: tag)
    }

    /// `head` is a complete request head as serialized for the upstream; `originTarget` the
    /// origin-form target (the head's own may be absolute, through a parent proxy).
    public func sign(head: [UInt8], scheme: String, authority: String, originTarget: String, now: Int64) throws -> [UInt8] {
        let nonceBytes = nonce ? SecureRandom.bytes(16) : nil
        if let plan, let signed = try plan.signedHead(head, scheme: scheme, authority: authority, originTarget: originTarget,
                                                      created: now, expires: expiresIn.map { now + $0 }, nonce: nonceBytes, key: key) {
            return signed
        }
        return try signParsing(head: head, scheme: scheme, authority: authority, originTarget: originTarget, now: now, nonce: nonceBytes)
    }

    /// The general path: the head parsed, the client's members under our label dropped, the base
    /// built by `SignatureBase` for any component.
    func signParsing(head: [UInt8], scheme: String, authority: String, originTarget: String, now: Int64, nonce nonceBytes: [UInt8]?) throws -> [UInt8] {
        var parsed: RequestHead
        switch head.withUnsafeBytes({ HeadParser.parseRequest($0, maxHeadBytes: head.count) }) {
        case .complete(let request, _): parsed = request
        default: throw SignatureError.signingFailed("the request head to sign does not parse")
        }
        let withoutOurs = SignatureMembers.removing(label: label, from: parsed.headers)
        let fields = withoutOurs.fields.map { (name: $0.name, value: $0.value) }
        let message = SignableRequest(method: parsed.method, scheme: scheme, authority: authority, target: originTarget, fields: fields)
        let covered = components.filter { Self.isPresent($0, in: message) }
        let parameters = SignatureParameters(created: now, expires: expiresIn.map { now + $0 },
                                             nonce: nonceBytes.map(Base64.encode),
                                             algorithm: key.algorithm.rawValue, keyID: keyID, tag: tag)
        let signature = try MessageSigner.sign(.request(message), label: label, components: covered, parameters: parameters, key: key)
        guard withoutOurs == parsed.headers, head.count >= 4 else {
            // The client's own members under our label went: the head is written anew.
            parsed.headers = withoutOurs
            parsed.headers.append("Signature-Input", signature.signatureInput)
            parsed.headers.append("Signature", signature.signature)
            return HeadSerializer.request(method: parsed.method, target: parsed.target, version: parsed.version, headers: parsed.headers)
        }
        // The usual case: the two fields go in before the blank line that ends the head.
        var signed = Array(head.dropLast(2))
        signed.reserveCapacity(head.count + signature.signatureInput.utf8.count + signature.signature.utf8.count + 40)
        signed += Array("Signature-Input: \(signature.signatureInput)\r\nSignature: \(signature.signature)\r\n\r\n".utf8)
        return signed
    }

    /// A listed field the request lacks is left out (SPEC: "a listed header the request lacks
    /// is left out"), as is a query parameter it does not carry; derived components are always there.
    static func isPresent(_ component: SignatureComponent, in message: SignableRequest) -> Bool {
        if component.name == "@query-param" {
            return (try? ComponentValues.values(of: component, in: .request(message))) != nil
        }
        return component.isDerived || message.fields.contains { ASCIICase.equal($0.name, component.name) }
    }
}

/// A client's own `Signature-Input` / `Signature` members under the label Countersign signs
/// with are dropped (they would collide with ours); its other signatures pass untouched.
enum SignatureMembers {
    static func removing(label: String, from headers: HeaderFields) -> HeaderFields {
        guard headers.contains("Signature-Input") || headers.contains("Signature") else { return headers }
        var result = headers
        for name in ["Signature-Input", "Signature"] where headers.contains(name) {
            let combined = headers.values(name).joined(separator: ", ")
            result.removeAll(name)
            // A field that is not a valid dictionary cannot be kept beside ours: it goes.
            guard var dictionary = try? StructuredFieldParser.parseDictionary(combined) else { continue }
            dictionary[label] = nil
            if !dictionary.isEmpty, let text = try? StructuredFieldSerializer.serialize(dictionary) { result.append(name, text) }
        }
        return result
    }
}
