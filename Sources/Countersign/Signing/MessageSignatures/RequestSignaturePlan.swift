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
        try head.withUnsafeBufferPointer { head in
            guard let lines = HeadLines(head), !lines.hasSignatureFields else { return nil }
            var target = originTarget
            return try target.withUTF8 { originTarget in
                try signedHead(lines, target: TargetParts(scheme: scheme, authority: authority, originTarget: originTarget),
                               created: created, expires: expires, nonce: nonce, key: key)
            }
        }
    }

    private func signedHead(_ lines: HeadLines, target: TargetParts, created: Int64, expires: Int64?,
                            nonce: [UInt8]?, key: MessageSigningKey) throws -> [UInt8] {
        let head = lines.head
        // The head sent: the request's lines, then `Signature-Input`, whose value is also the
        // base's last line (§2.3), then `Signature` — the value written once, into the head.
        var signed: [UInt8] = []
        signed.reserveCapacity(head.count + 2 * labelKey.count + fixedParameters.count + 256)
        signed += head[..<(head.count - 2)]
        signed += Self.signatureInputName
        signed += labelKey
        signed.append(UInt8(ascii: "="))
        let inputStart = signed.count
        signed.append(UInt8(ascii: "("))
        var base: [UInt8] = []
        base.reserveCapacity(head.count + fixedParameters.count + 256)
        for component in covered {
            let start = base.count
            base += component.identifier
            base.append(UInt8(ascii: ":"))
            base.append(0x20)
            let valueStart = base.count
            switch component.source {
            case .method: base += head[lines.method]
            case .scheme: target.appendScheme(to: &base)
            case .authority: target.appendAuthority(to: &base)
            case .targetURI:
                target.appendScheme(to: &base)
                base += [UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: "/")]
                target.appendAuthority(to: &base)
                target.appendPath(to: &base)
                base += target.query
            case .requestTarget:
                target.appendPath(to: &base)
                base += target.query
            case .path: target.appendPath(to: &base)
            case .query:
                if target.query.isEmpty { base.append(UInt8(ascii: "?")) } else { base += target.query }
            case .field(let name):
                // A listed field the request lacks is left out of the signature (SPEC).
                guard lines.appendValues(of: name, to: &base) else {
                    base.removeSubrange(start...)
                    continue
                }
            }
            if base[valueStart...].contains(where: { $0 == 0x0A || $0 == 0x0D }) {
                throw SignatureError.invalidComponent("the value of \(String(decoding: component.identifier, as: UTF8.self)) holds a line break")
            }
            base.append(0x0A)
            if signed.count > inputStart + 1 { signed.append(0x20) }
            signed += component.identifier
        }
        signed += Self.createdParameter
        Self.appendDecimal(created, to: &signed)
        if let expires {
            signed += Self.expiresParameter
            Self.appendDecimal(expires, to: &signed)
        }
        if let nonce {
            signed += Self.nonceParameter
            nonce.withUnsafeBytes { Base64.append($0, to: &signed) }
            signed.append(UInt8(ascii: "\""))
        }
        signed += fixedParameters
        base += Self.signatureParamsIdentifier
        base += signed[inputStart...]
        signed += Self.signatureName
        signed += labelKey
        signed += [UInt8(ascii: "="), UInt8(ascii: ":")]
        try key.appendSignature(of: base, base64To: &signed)
        signed += Self.headEnd
        return signed
    }

    private static let createdParameter = Array(");created=".utf8)
    private static let expiresParameter = Array(";expires=".utf8)
    private static let nonceParameter = Array(";nonce=\"".utf8)
    private static let signatureParamsIdentifier = Array("\"@signature-params\": ".utf8)
    private static let signatureInputName = Array("Signature-Input: ".utf8)
    private static let signatureName = Array("\r\nSignature: ".utf8)
    private static let headEnd = Array(":\r\n\r\n".utf8)

    /// An sf-integer's digits (RFC 8941 §3.3.1), without building a `String`.
    private static func appendDecimal(_ value: Int64, to output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0) // room for 20 digits, least significant first
        var count = 0
        withUnsafeMutableBytes(of: &digits) { room in
            repeat {
                room[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { output.append(room[index]) }
        }
    }
}

/// The derived components' parts of the target URI (§2.2): scheme and authority lower-cased, the
/// default port left out, the path `/` when empty, the query with its `?` (empty when none).
/// Read in place from the strings and the target's bytes; written straight into the base.
private struct TargetParts {
    let scheme: String
    let authority: String
    let path: UnsafeBufferPointer<UInt8>
    let query: UnsafeBufferPointer<UInt8>

    init(scheme: String, authority: String, originTarget: UnsafeBufferPointer<UInt8>) {
        self.scheme = scheme
        self.authority = authority
        let question = originTarget.firstIndex(of: UInt8(ascii: "?")) ?? originTarget.endIndex
        path = UnsafeBufferPointer(rebasing: originTarget[..<question])
        query = UnsafeBufferPointer(rebasing: originTarget[question...])
    }

    func appendScheme(to output: inout [UInt8]) {
        Self.appendLowercased(scheme, to: &output)
    }

    func appendAuthority(to output: inout [UInt8]) {
        let start = output.count
        Self.appendLowercased(authority, to: &output)
        let defaultPort = ASCIICase.equal(scheme, "https") ? Self.httpsPort : Self.httpPort
        if output.count - start > defaultPort.count, output[(output.count - defaultPort.count)...].elementsEqual(defaultPort) {
            output.removeLast(defaultPort.count)
        }
    }

    func appendPath(to output: inout [UInt8]) {
        if path.isEmpty { output.append(UInt8(ascii: "/")) } else { output += path }
    }

    /// Copied whole, then lower-cased in place (a byte-at-a-time append costs more than both).
    private static func appendLowercased(_ text: String, to output: inout [UInt8]) {
        let start = output.count
        output.append(contentsOf: text.utf8)
        output.withUnsafeMutableBufferPointer { bytes in
            for index in start..<bytes.count { bytes[index] = ASCIICase.lower(bytes[index]) }
        }
    }

    private static let httpPort = Array(":80".utf8)
    private static let httpsPort = Array(":443".utf8)
}

/// A serialized request head's method and field lines, located without copying: the head is one
/// Countersign wrote, so each line is `name: value` ending in CRLF.
private struct HeadLines {
    let head: UnsafeBufferPointer<UInt8>
    let method: Range<Int>
    /// Each field line's name and value (value trimmed of SP and HTAB).
    let fields: [(name: Range<Int>, value: Range<Int>)]
    let hasSignatureFields: Bool

    init?(_ head: UnsafeBufferPointer<UInt8>) {
        guard head.count >= 4, let space = head.firstIndex(of: 0x20) else { return nil }
        self.head = head
        method = 0..<space
        var fields: [(name: Range<Int>, value: Range<Int>)] = []
        fields.reserveCapacity(16)
        var signatureFields = false
        guard var lineStart = Self.lineEnd(head, from: space).map({ $0 + 2 }) else { return nil }
        while let end = Self.lineEnd(head, from: lineStart), end > lineStart {
            guard let colon = Self.colon(head, from: lineStart, to: end) else { return nil }
            var valueStart = colon + 1, valueEnd = end
            while valueStart < valueEnd, head[valueStart] == 0x20 || head[valueStart] == 0x09 { valueStart += 1 }
            while valueEnd > valueStart, head[valueEnd - 1] == 0x20 || head[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            let name = lineStart..<colon
            if Self.named(name, in: head, Self.signatureInput) || Self.named(name, in: head, Self.signature) { signatureFields = true }
            fields.append((name, valueStart..<valueEnd))
            lineStart = end + 2
        }
        self.fields = fields
        hasSignatureFields = signatureFields
    }

    /// Appends the values of every line named `name` (lower case) joined by ", "; false when there is none.
    func appendValues(of name: [UInt8], to output: inout [UInt8]) -> Bool {
        var found = false
        for field in fields where Self.named(field.name, in: head, name) {
            if found { output += [UInt8(ascii: ","), 0x20] }
            output += head[field.value]
            found = true
        }
        return found
    }

    private static let signatureInput = Array("signature-input".utf8)
    private static let signature = Array("signature".utf8)

    /// Whether the bytes at `range` are `name` in any case.
    private static func named(_ range: Range<Int>, in head: UnsafeBufferPointer<UInt8>, _ name: [UInt8]) -> Bool {
        range.count == name.count && name.withUnsafeBufferPointer { ASCIICase.equal(UnsafeBufferPointer(rebasing: head[range]), $0) }
    }

    private static func colon(_ head: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int? {
        var index = start
        while index < end {
            if head[index] == UInt8(ascii: ":") { return index }
            index += 1
        }
        return nil
    }

    private static func lineEnd(_ head: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var index = start
        while index + 1 < head.count {
            if head[index] == 0x0D && head[index + 1] == 0x0A { return index }
            index += 1
        }
        return nil
    }
}
