import CountersignHTTP
import CountersignSupport

/// The parts of a host's request signature that do not change between requests, made once when
/// the configuration is read: each covered component's identifier as bytes and where its value
/// comes from, the label as a dictionary key, and the parameters after `created`, `expires` and
/// `nonce`. A head is then signed by reading its bytes where they lie: it is not parsed again into
/// `String`s and nothing goes through the structured-field serializer per request (the two were
/// most of the cost of a signature, issue 22's benchmark).
///
/// Components whose value needs more than a byte copy (`sf`, `key`, `bs`, `req`, `@query-param`)
/// have no plan: their signer takes the general path, `SignatureBase.build`.
struct RequestSignaturePlan: Sendable {
    enum Source: Sendable {
        case method, scheme, authority, targetURI, requestTarget, path, query
        /// Every line of one field, by its lower-case name, trimmed and joined by ", " (§2.1).
        case field([UInt8])
    }

    struct Covered: Sendable {
        let identifier: [UInt8]
        let source: Source
    }

    let covered: [Covered]
    /// `sig1`, as a dictionary key.
    let labelKey: [UInt8]
    /// `;alg="…";keyid="…"` and `;tag="…"` when configured: the same for every signature.
    let fixedParameters: [UInt8]

    init?(label: String, components: [SignatureComponent], algorithm: SignatureAlgorithm, keyID: String, tag: String?) {
        var covered: [Covered] = []
        for component in components {
            guard component.parameters.isEmpty, let source = Self.source(of: component.name) else { return nil }
            guard !covered.contains(where: { $0.identifier == Array(component.identifier.utf8) }) else { return nil }
            covered.append(Covered(identifier: Array(component.identifier.utf8), source: source))
        }
        var parameters = StructuredParameters()
        parameters["alg"] = .string(algorithm.rawValue)
        parameters["keyid"] = .string(keyID)
        if let tag { parameters["tag"] = .string(tag) }
        var key = "", fixed = ""
        guard (try? StructuredFieldSerializer.appendKey(label, to: &key)) != nil,
              (try? StructuredFieldSerializer.appendParameters(parameters, to: &fixed)) != nil else { return nil }
        self.covered = covered
        labelKey = Array(key.utf8)
        fixedParameters = Array(fixed.utf8)
    }

    private static func source(of name: String) -> Source? {
        switch name {
        case "@method": return .method
        case "@scheme": return .scheme
        case "@authority": return .authority
        case "@target-uri": return .targetURI
        case "@request-target": return .requestTarget
        case "@path": return .path
        case "@query": return .query
        case "@query-param", "@status": return nil
        default: return name.hasPrefix("@") ? nil : .field(Array(name.utf8))
        }
    }

    /// The request as the signature reads it, taken from the head's bytes. Nil when the head
    /// already carries `Signature-Input` or `Signature` (a client's own signatures: the general
    /// path keeps those of other labels and drops ours).
    func signedHead(_ head: [UInt8], scheme: String, authority: String, originTarget: String,
                    created: Int64, expires: Int64?, nonce: [UInt8]?, key: MessageSigningKey) throws -> [UInt8]? {
        guard let lines = HeadLines(head), !lines.hasSignatureFields else { return nil }
        let target = TargetParts(scheme: scheme, authority: authority, originTarget: originTarget)
        var base: [UInt8] = []
        base.reserveCapacity(512)
        var inputValue: [UInt8] = [UInt8(ascii: "(")]
        inputValue.reserveCapacity(256)
        for component in covered {
            let start = base.count
            base += component.identifier
            base.append(contentsOf: ": ".utf8)
            let valueStart = base.count
            switch component.source {
            case .method: base += head[lines.method]
            case .scheme: base += target.scheme
            case .authority: base += target.authority
            case .targetURI:
                base += target.scheme
                base.append(contentsOf: "://".utf8)
                base += target.authority
                base += target.path
                base += target.query
            case .requestTarget:
                base += target.path
                base += target.query
            case .path: base += target.path
            case .query: base += target.query.isEmpty ? [UInt8(ascii: "?")] : target.query
            case .field(let name):
                // A listed field the request lacks is left out of the signature (SPEC).
                guard lines.appendValues(of: name, in: head, to: &base) else {
                    base.removeSubrange(start...)
                    continue
                }
            }
            if base[valueStart...].contains(where: { $0 == 0x0A || $0 == 0x0D }) {
                throw SignatureError.invalidComponent("the value of \(String(decoding: component.identifier, as: UTF8.self)) holds a line break")
            }
            base.append(0x0A)
            if inputValue.count > 1 { inputValue.append(0x20) }
            inputValue += component.identifier
        }
        inputValue.append(contentsOf: ");created=\(created)".utf8)
        if let expires { inputValue.append(contentsOf: ";expires=\(expires)".utf8) }
        if let nonce {
            inputValue.append(contentsOf: ";nonce=\"".utf8)
            nonce.withUnsafeBytes { Base64.append($0, to: &inputValue) }
            inputValue.append(UInt8(ascii: "\""))
        }
        inputValue += fixedParameters
        base.append(contentsOf: "\"@signature-params\": ".utf8)
        base += inputValue
        let signature = try key.sign(bytes: base)

        // The two fields go in before the blank line that ends the head.
        var signed = [UInt8]()
        signed.reserveCapacity(head.count + 2 * labelKey.count + inputValue.count + signature.count * 4 / 3 + 48)
        signed += head[..<(head.count - 2)]
        signed.append(contentsOf: "Signature-Input: ".utf8)
        signed += labelKey
        signed.append(UInt8(ascii: "="))
        signed += inputValue
        signed.append(contentsOf: "\r\nSignature: ".utf8)
        signed += labelKey
        signed.append(contentsOf: "=:".utf8)
        signature.withUnsafeBytes { Base64.append($0, to: &signed) }
        signed.append(contentsOf: ":\r\n\r\n".utf8)
        return signed
    }
}

/// The derived components' parts of the target URI (§2.2): scheme and authority lower-cased, the
/// default port left out, the path `/` when empty, the query with its `?` (empty when none).
private struct TargetParts {
    let scheme: [UInt8]
    let authority: [UInt8]
    let path: [UInt8]
    let query: [UInt8]

    init(scheme: String, authority: String, originTarget: String) {
        self.scheme = scheme.utf8.map(ASCIICase.lower)
        var authority = authority.utf8.map(ASCIICase.lower)
        let defaultPort = Array((self.scheme == Array("https".utf8) ? ":443" : ":80").utf8)
        if authority.count > defaultPort.count, authority.suffix(defaultPort.count).elementsEqual(defaultPort) {
            authority.removeLast(defaultPort.count)
        }
        self.authority = authority
        let target = Array(originTarget.utf8)
        let question = target.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex
        path = question == 0 ? [UInt8(ascii: "/")] : Array(target[..<question])
        query = Array(target[question...])
    }
}

/// A serialized request head's method and field lines, located without copying: the head is one
/// Countersign wrote, so each line is `name: value` ending in CRLF.
private struct HeadLines {
    let method: Range<Int>
    /// Each field line's name and value (value trimmed of SP and HTAB).
    let fields: [(name: Range<Int>, value: Range<Int>)]
    let hasSignatureFields: Bool

    init?(_ head: [UInt8]) {
        guard head.count >= 4, let space = head.firstIndex(of: 0x20) else { return nil }
        method = 0..<space
        var fields: [(name: Range<Int>, value: Range<Int>)] = []
        var signatureFields = false
        guard var lineStart = Self.lineEnd(head, from: space).map({ $0 + 2 }) else { return nil }
        while let end = Self.lineEnd(head, from: lineStart), end > lineStart {
            guard let colon = head[lineStart..<end].firstIndex(of: UInt8(ascii: ":")) else { return nil }
            var valueStart = colon + 1, valueEnd = end
            while valueStart < valueEnd, head[valueStart] == 0x20 || head[valueStart] == 0x09 { valueStart += 1 }
            while valueEnd > valueStart, head[valueEnd - 1] == 0x20 || head[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            let name = lineStart..<colon
            if ASCIICase.equal(head[name], "signature-input".utf8) || ASCIICase.equal(head[name], "signature".utf8) { signatureFields = true }
            fields.append((name, valueStart..<valueEnd))
            lineStart = end + 2
        }
        self.fields = fields
        hasSignatureFields = signatureFields
    }

    /// Appends the values of every line named `name` joined by ", "; false when there is none.
    func appendValues(of name: [UInt8], in head: [UInt8], to output: inout [UInt8]) -> Bool {
        var found = false
        for field in fields where field.name.count == name.count && zip(head[field.name], name).allSatisfy({ ASCIICase.lower($0) == $1 }) {
            if found { output += [UInt8(ascii: ","), 0x20] }
            output += head[field.value]
            found = true
        }
        return found
    }

    private static func lineEnd(_ head: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < head.count {
            if head[index] == 0x0D && head[index + 1] == 0x0A { return index }
            index += 1
        }
        return nil
    }
}
