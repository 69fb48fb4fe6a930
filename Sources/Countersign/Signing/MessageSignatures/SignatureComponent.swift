import CountersignHTTP

/// One covered component of an RFC 9421 signature (§2): a derived component (`@method`, …) or
/// a field name, with the parameters that change how its value is taken (`sf`, `key`, `bs`,
/// `req`, `name` for `@query-param`). Its identifier is the structured-field string item that
/// stands in `Signature-Input` and at the head of its line in the signature base.
public struct SignatureComponent: Equatable, Sendable, CustomStringConvertible {
    public let name: String
    public let parameters: StructuredParameters
    /// The identifier as serialized (`"@query-param";name="Pet"`): made once, written on every
    /// signature base line and in every `Signature-Input`.
    public let identifier: String

    public static let derivedNames: Set<String> = [
        "@method", "@target-uri", "@authority", "@scheme", "@request-target", "@path", "@query", "@query-param", "@status",
    ]

    public init(_ name: String, parameters: StructuredParameters = StructuredParameters()) throws {
        self.name = name
        self.parameters = parameters
        self.identifier = try StructuredFieldSerializer.serialize(StructuredItem(.string(name), parameters: parameters))
        try validate()
    }

    /// Parses the configuration's (and `Signature-Input`'s) spelling: `@path`, `content-type`,
    /// or a full item such as `"@query-param";name="Pet"` or `"example-dict";key="a"`.
    public static func parse(_ text: String) throws -> SignatureComponent {
        if text.hasPrefix("\"") {
            let item = try StructuredFieldParser.parseItem(text)
            return try SignatureComponent(item: item)
        }
        return try SignatureComponent(text)
    }

    public init(item: StructuredItem) throws {
        guard case .string(let name) = item.bare else { throw SignatureError.invalidComponent("a component identifier is a string") }
        try self.init(name, parameters: item.parameters)
    }

    public var isDerived: Bool { name.hasPrefix("@") }

    public var item: StructuredItem { StructuredItem(.string(name), parameters: parameters) }

    /// The identifier as serialized (`"@query-param";name="Pet"`).
    public var description: String { identifier }

    private func validate() throws {
        if isDerived {
            guard Self.derivedNames.contains(name) else { throw SignatureError.invalidComponent("\(name) is not a derived component RFC 9421 defines") }
            for key in parameters.keys where !(key == "req" || (key == "name" && name == "@query-param")) {
                throw SignatureError.invalidComponent("\(name) takes no \(key) parameter")
            }
            if name == "@query-param" {
                guard case .string? = parameters["name"] else { throw SignatureError.invalidComponent("@query-param needs a name parameter") }
            }
        } else {
            guard CharacterClass.isToken(name), name == name.lowercased() else {
                throw SignatureError.invalidComponent("\(name.debugDescription) is not a lower-case field name")
            }
            for key in parameters.keys where !["sf", "key", "bs", "req", "tr"].contains(key) {
                throw SignatureError.invalidComponent("\(name) takes no \(key) parameter")
            }
            if parameters["tr"] != nil {
                throw SignatureError.invalidComponent("\(name);tr: trailers are not signed (they arrive after the head that carries the signature)")
            }
            if parameters["sf"] != nil, KnownStructuredFields.type(of: name) == nil {
                throw SignatureError.invalidComponent("\(name);sf: the structured type of \(name) is not known; cover it without sf")
            }
            if parameters["bs"] != nil && (parameters["sf"] != nil || parameters["key"] != nil) {
                throw SignatureError.invalidComponent("bs cannot be combined with sf or key (RFC 9421 §2.1)")
            }
        }
    }
}
