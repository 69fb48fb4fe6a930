import CountersignSupport

/// The signature base of RFC 9421 §2.5: one line per covered component, `"id": value`, then
/// the `@signature-params` line. Built the same way to sign and to verify.
public enum SignatureBase {
    /// The base and the serialized signature parameters (the `Signature-Input` member value).
    public static func build(_ message: SignableMessage, components: [SignatureComponent],
                             parameters: StructuredParameters) throws -> (base: String, signatureParams: String) {
        var base = ""
        var seen: [String] = []
        for component in components {
            let identifier = component.description
            guard !seen.contains(identifier) else { throw SignatureError.invalidComponent("\(identifier) is covered twice") }
            seen.append(identifier)
            for value in try ComponentValues.values(of: component, in: message) {
                guard !value.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) else {
                    throw SignatureError.invalidComponent("the value of \(identifier) holds a line break")
                }
                base += identifier + ": " + value + "\n"
            }
        }
        let signatureParams = try StructuredFieldSerializer.serialize(
            StructuredMember.innerList(StructuredInnerList(components.map(\.item), parameters: parameters)))
        base += "\"@signature-params\": " + signatureParams
        return (base, signatureParams)
    }
}

/// The value of each component (RFC 9421 §2.1, §2.2). `@query-param` yields one value per
/// occurrence of the parameter, each of which is its own line of the base.
enum ComponentValues {
    static func values(of component: SignatureComponent, in message: SignableMessage) throws -> [String] {
        var message = message
        if component.parameters["req"] != nil {
            guard case .response(let response) = message, let request = response.request else {
                throw SignatureError.invalidComponent("\(component) names the request, and there is none")
            }
            message = .request(request)
        }
        return component.isDerived ? try derived(component, message) : [try field(component, message)]
    }

    private static func derived(_ component: SignatureComponent, _ message: SignableMessage) throws -> [String] {
        if component.name == "@status" {
            guard case .response(let response) = message else { throw SignatureError.invalidComponent("@status is a response component") }
            return [String(response.status)]
        }
        guard case .request(let request) = message else { throw SignatureError.invalidComponent("\(component.name) is a request component") }
        let path = request.path.isEmpty ? "/" : request.path
        let query = request.query.map { "?" + $0 } ?? ""
        switch component.name {
        case "@method": return [request.method]
        case "@scheme": return [request.scheme.lowercased()]
        case "@authority": return [normalizedAuthority(request)]
        case "@target-uri": return [request.scheme.lowercased() + "://" + normalizedAuthority(request) + path + query]
        case "@request-target": return [path + query]
        case "@path": return [path]
        case "@query": return [request.query.map { "?" + $0 } ?? "?"]
        case "@query-param":
            guard case .string(let name)? = component.parameters["name"] else { throw SignatureError.invalidComponent("@query-param needs a name") }
            let wanted = FormEncoding.reencode(FormEncoding.decode(Substring(name)))
            let values = FormEncoding.pairs(request.query ?? "").filter { $0.name == wanted }.map(\.value)
            guard !values.isEmpty else { throw SignatureError.missingComponent("query parameter \(name)") }
            return values
        default:
            throw SignatureError.invalidComponent("\(component.name) is not a derived component")
        }
    }

    /// Lower-cased host, default port left out (RFC 9421 §2.2.3).
    private static func normalizedAuthority(_ request: SignableRequest) -> String {
        let authority = request.authority.lowercased()
        let defaultPort = request.scheme.lowercased() == "https" ? ":443" : ":80"
        return authority.hasSuffix(defaultPort) ? String(authority.dropLast(defaultPort.count)) : authority
    }

    private static func field(_ component: SignatureComponent, _ message: SignableMessage) throws -> String {
        let lines = message.fieldLines(component.name).map(trimmed)
        guard !lines.isEmpty else { throw SignatureError.missingComponent("\(component.name) field") }
        if component.parameters["tr"] != nil { throw SignatureError.invalidComponent("trailer components are not supported") }
        if component.parameters["bs"] != nil {
            return lines.map { ":" + Base64.encode(Array($0.utf8)) + ":" }.joined(separator: ", ")
        }
        let combined = lines.joined(separator: ", ")
        if case .string(let key)? = component.parameters["key"] {
            let dictionary = try parse(StructuredFieldParser.parseDictionary(combined), component)
            guard let member = dictionary[key] else { throw SignatureError.missingComponent("\(component.name) member \(key)") }
            return try StructuredFieldSerializer.serialize(member)
        }
        if component.parameters["sf"] != nil {
            guard let type = KnownStructuredFields.type(of: component.name) else {
                throw SignatureError.invalidComponent("the structured type of \(component.name) is not known")
            }
            return try StructuredFieldSerializer.serialize(try parse(StructuredFieldParser.parse(combined, as: type), component))
        }
        return combined
    }

    private static func parse<T>(_ body: @autoclosure () throws -> T, _ component: SignatureComponent) throws -> T {
        do { return try body() } catch let error as StructuredFieldError {
            throw SignatureError.invalidComponent("\(component.name) is not a valid structured field (\(error))")
        }
    }

    /// Leading and trailing spaces and tabs dropped (RFC 9421 §2.1).
    private static func trimmed(_ value: String) -> String {
        var scalars = Substring(value)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}

/// Fields whose structured type RFC 9421 and the registry name, for the `sf` parameter.
enum KnownStructuredFields {
    static func type(of name: String) -> StructuredFieldType? {
        switch name {
        case "signature-input", "signature", "accept-signature", "content-digest", "repr-digest", "want-content-digest",
             "want-repr-digest", "priority", "example-dict": return .dictionary
        case "cache-status", "proxy-status", "client-hints", "accept-ch": return .list
        default: return nil
        }
    }
}
