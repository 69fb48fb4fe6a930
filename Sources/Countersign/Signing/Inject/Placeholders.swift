import CountersignHTTP
import CountersignSupport

/// Finding `countersign:NAME` (or `countersign%3ANAME`) and putting the secret in its place.
/// One pass from left to right: what a secret contains is never searched again, so a secret
/// that itself reads `countersign:other` resolves nothing further.
enum Placeholders {
    static let marker = Array("countersign".utf8)

    enum Encoding {
        /// In a target: the secret percent-encoded (unreserved bytes kept).
        case percent
        /// In a header value: the secret's bytes as they are (checked free of control characters).
        case raw
    }

    /// A field's new value, or nil to keep it. A `Basic` credential is looked into too: the
    /// placeholder may be the user or the password inside its base64.
    static func substitute(inField name: ArraySlice<UInt8>, value: ArraySlice<UInt8>, plan: InjectionPlan, resolved: inout [String]) throws -> [UInt8]? {
        if ASCIICase.equal(name, "authorization".utf8), let basic = try substituteInBasic(value, plan: plan, resolved: &resolved) { return basic }
        return try substitute(value, plan: plan, encoding: .raw, resolved: &resolved)
    }

    /// The bytes with every placeholder resolved, nil when there was none.
    static func substitute(_ bytes: ArraySlice<UInt8>, plan: InjectionPlan, encoding: Encoding, resolved: inout [String]) throws -> [UInt8]? {
        var out: [UInt8] = []
        var copiedUpTo = bytes.startIndex
        var searchFrom = bytes.startIndex
        var found = false
        while let range = ByteSearch.firstRange(of: marker, in: bytes, from: searchFrom) {
            searchFrom = range.upperBound
            var nameStart = range.upperBound
            var percentForm = false
            if nameStart < bytes.endIndex, bytes[nameStart] == UInt8(ascii: ":") {
                nameStart += 1
            } else if bytes.endIndex - nameStart >= 3, bytes[nameStart] == UInt8(ascii: "%"), bytes[nameStart + 1] == UInt8(ascii: "3"),
                      bytes[nameStart + 2] | 0x20 == UInt8(ascii: "a") {
                nameStart += 3
                percentForm = true
            } else {
                continue
            }
            let nameEnd = bytes[nameStart...].firstIndex { !PlaceholderName.isNameByte($0) } ?? bytes.endIndex
            guard nameEnd > nameStart else { continue }
            let name = String(decoding: bytes[nameStart..<nameEnd], as: UTF8.self)
            guard let value = plan.placeholders[name] else { throw PlaceholderRefusal(name: name) }
            let secret = try plan.bytes(of: value)
            out.append(contentsOf: bytes[copiedUpTo..<range.lowerBound])
            out.append(contentsOf: encoding == .percent || percentForm ? PercentEncoding.encode(secret) : secret)
            copiedUpTo = nameEnd
            searchFrom = nameEnd
            if !resolved.contains(name) { resolved.append(name) }
            found = true
        }
        guard found else { return nil }
        out.append(contentsOf: bytes[copiedUpTo...])
        return out
    }

    /// `Basic <base64 of user:password>` with a placeholder inside the decoded text.
    private static func substituteInBasic(_ value: ArraySlice<UInt8>, plan: InjectionPlan, resolved: inout [String]) throws -> [UInt8]? {
        guard value.count > 6, ASCIICase.equal(Array(value.prefix(6)), "basic ".utf8) else { return nil }
        let encoded = value.dropFirst(6).drop { $0 == UInt8(ascii: " ") }
        guard let decoded = Base64.decode(String(decoding: encoded, as: UTF8.self)),
              let substituted = try substitute(decoded[...], plan: plan, encoding: .raw, resolved: &resolved) else { return nil }
        return Array(value.prefix(6)) + Array(Base64.encode(substituted).utf8)
    }
}

/// `inject` query parameters: every parameter of that name the client sent is dropped and
/// the injected one appended, so the upstream sees exactly one.
enum QueryInjection {
    static func apply(_ parameters: [InjectionPlan.QueryParameter], of plan: InjectionPlan, to target: String) throws -> String {
        let question = target.firstIndex(of: "?")
        let path = question.map { String(target[..<$0]) } ?? target
        var pairs = question.map { target[target.index(after: $0)...].split(separator: "&", omittingEmptySubsequences: true).map(String.init) } ?? []
        for parameter in parameters {
            let encodedName = PercentEncoding.string(parameter.name.utf8)
            pairs.removeAll { pair in
                let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
                return FormEncoding.decode(Substring(name)) == Array(parameter.name.utf8)
            }
            pairs.append(encodedName + "=" + PercentEncoding.string(try plan.bytes(of: parameter.value)))
        }
        return path + "?" + pairs.joined(separator: "&")
    }
}
