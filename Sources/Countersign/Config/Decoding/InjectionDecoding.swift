import CountersignHTTP

/// Decodes `hosts.<pattern>.inject` and `.placeholders`: which credentials go on every request
/// to the host, and which placeholders may be resolved toward it.
struct InjectionDecoding {
    let context: DecodingContext
    let references: CredentialReferences

    /// Fields an injected value must never replace: framing, routing and hop-by-hop fields
    /// (an injected `Content-Length` would reframe the request), and the proxy's own.
    static let reservedHeaders: Set<String> = [
        "host", "content-length", "transfer-encoding", "connection", "keep-alive", "proxy-connection", "te", "trailer",
        "upgrade", "expect", "proxy-authorization", "proxy-authenticate", "via", "signature", "signature-input", "content-digest",
    ]

    func rules(in reader: ObjectReader) -> [InjectRule]? {
        guard let elements = reader.array("inject") else { return reader.has("inject") ? nil : [] }
        let errorsBefore = context.errors.count
        var rules: [InjectRule] = []
        for (node, path) in elements {
            guard let rule = rule(node, at: path) else { continue }
            if rules.contains(where: { $0.placement.sameTarget(as: rule.placement) }) {
                context.fail(path, at: node.position, "sets \(rule.placement) again; each header or query parameter is injected once")
                continue
            }
            rules.append(rule)
        }
        return context.errors.count == errorsBefore ? rules : nil
    }

    private func rule(_ node: JSON5Node, at path: KeyPath) -> InjectRule? {
        guard let reader = ObjectReader(node, at: path, context: context, keys: ["header", "query", "credential", "prefix"]) else { return nil }
        let errorsBefore = context.errors.count
        var injectable = false
        if reader.required("credential", hint: "add credential: \"<a password, token, value or OAuth2 credential>\"") != nil,
           let name = reader.text("credential"), let node = reader.node("credential") {
            injectable = references.injectable(name, at: reader.keyPath("credential"), position: node.position)
        }
        let placement: InjectRule.Placement?
        switch (reader.has("header"), reader.has("query")) {
        case (true, true):
            reader.fail("query", "an inject entry sets either a header or a query parameter; split it into two entries")
            placement = nil
        case (false, false):
            context.fail(path, at: node.position, "says nowhere to put the credential; add header: \"X-Api-Key\" or query: \"api_key\"")
            placement = nil
        case (true, false):
            placement = header(reader)
        case (false, true):
            if reader.has("prefix") { reader.fail("prefix", "prefix applies to headers only; put it into the value, or inject a header") }
            placement = reader.text("query").map { .query(name: $0) }
        }
        guard context.errors.count == errorsBefore, injectable, let placement, let credential = reader.text("credential") else { return nil }
        return InjectRule(placement, credential: credential)
    }

    private func header(_ reader: ObjectReader) -> InjectRule.Placement? {
        guard let name = reader.text("header") else { return nil }
        guard CharacterClass.isToken(name) else {
            reader.fail("header", "\"\(name)\" is not a header field name (letters, digits and !#$%&'*+-.^_`|~ only)")
            return nil
        }
        guard !Self.reservedHeaders.contains(name.lowercased()) else {
            reader.fail("header", "\(name) frames, routes or signs the request and cannot be injected")
            return nil
        }
        let prefix = reader.string("prefix") ?? ""
        guard prefix.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            reader.fail("prefix", "must be printable ASCII (a header value), e.g. \"Token \"")
            return nil
        }
        return .header(name: name, prefix: prefix)
    }

    func placeholders(in reader: ObjectReader) -> [String]? {
        guard let elements = reader.array("placeholders") else { return reader.has("placeholders") ? nil : [] }
        let errorsBefore = context.errors.count
        var names: [String] = []
        for (node, path) in elements {
            guard let name = ObjectReader.string(node, at: path, context: context) else { continue }
            guard !names.contains(name) else {
                context.fail(path, at: node.position, "\"\(name)\" is listed twice")
                continue
            }
            guard PlaceholderName.isValid(name) else {
                context.fail(path, at: node.position, "\"\(name)\" cannot be written as a placeholder: countersign:NAME takes letters, digits, _ and - only; rename the credential")
                continue
            }
            if references.injectable(name, at: path, position: node.position) { names.append(name) }
        }
        return context.errors.count == errorsBefore ? names : nil
    }
}

extension InjectRule.Placement: CustomStringConvertible {
    public var description: String {
        switch self {
        case .header(let name, _): return "header \(name)"
        case .query(let name): return "query parameter \(name)"
        }
    }

    func sameTarget(as other: Self) -> Bool {
        switch (self, other) {
        case (.header(let a, _), .header(let b, _)): return a.lowercased() == b.lowercased()
        case (.query(let a), .query(let b)): return a == b
        default: return false
        }
    }
}

/// Whether a secret may stand in a header value: no CR, LF, NUL or other control character.
enum HeaderSafety {
    static func problem(in secret: Secret) -> String? {
        guard let byte = secret.bytes.first(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
        switch byte {
        case 0x0D: return "contains a carriage return (CR)"
        case 0x0A: return "contains a line feed (LF)"
        case 0x00: return "contains a NUL byte"
        default: return "contains the control character 0x\(String(byte, radix: 16))"
        }
    }
}
