/// Reads one JSON5 object strictly: keys not in the declared list are reported at once (with a
/// near-miss suggestion), and each typed accessor reports a wrong type or bad value under the
/// key's full path, returning nil so decoding can go on and collect every error.
struct ObjectReader {
    let path: KeyPath
    let position: SourcePosition
    let context: DecodingContext
    private let members: [String: JSON5Member]

    /// Returns nil (after reporting) when the node is not an object.
    init?(_ node: JSON5Node, at path: KeyPath, context: DecodingContext, keys allowed: [String]) {
        context.noteAllowedKeys(allowed, at: path)
        guard case .object(let list) = node.value else {
            context.fail(path, at: node.position, "expected an object { ... }, found \(node.kindName)")
            return nil
        }
        self.path = path
        self.position = node.position
        self.context = context
        var members: [String: JSON5Member] = [:]
        for member in list {
            members[member.key] = member
            guard !allowed.contains(member.key) else { continue }
            var message = "unknown key \"\(member.key)\""
            if let guess = NearMiss.suggestion(for: member.key, among: allowed) {
                message += " (did you mean \"\(guess)\"?)"
            } else {
                message += "; allowed here: " + allowed.joined(separator: ", ")
            }
            context.fail(path.appending(member.key), at: member.keyPosition, message)
        }
        self.members = members
    }

    /// The members of an object whose keys are names chosen by the user (credentials, hosts, users).
    static func namedEntries(_ node: JSON5Node, at path: KeyPath, context: DecodingContext) -> [JSON5Member]? {
        guard case .object(let list) = node.value else {
            context.fail(path, at: node.position, "expected an object { name: { ... } }, found \(node.kindName)")
            return nil
        }
        return list
    }

    func keyPath(_ key: String) -> KeyPath { path.appending(key) }

    /// The value of a key; an explicit `null` counts as absent.
    func node(_ key: String) -> JSON5Node? {
        guard let member = members[key] else { return nil }
        if case .null = member.value.value { return nil }
        return member.value
    }

    func has(_ key: String) -> Bool { node(key) != nil }

    /// Reports a missing key, with a hint at what to write.
    func required(_ key: String, hint: String) -> JSON5Node? {
        if let node = node(key) { return node }
        context.fail(path, at: position, "missing required key \"\(key)\"; \(hint)")
        return nil
    }

    func fail(_ key: String, _ message: String) {
        context.fail(keyPath(key), at: node(key)?.position ?? position, message)
    }

    // MARK: - Typed values

    func string(_ key: String) -> String? {
        guard let node = node(key) else { return nil }
        return ObjectReader.string(node, at: keyPath(key), context: context)
    }

    static func string(_ node: JSON5Node, at path: KeyPath, context: DecodingContext) -> String? {
        guard case .string(let text) = node.value else {
            context.fail(path, at: node.position, "expected a string in quotes, found \(node.kindName)")
            return nil
        }
        return text
    }

    /// A non-empty string.
    func text(_ key: String) -> String? {
        guard let text = string(key) else { return nil }
        if text.isEmpty {
            fail(key, "must not be empty")
            return nil
        }
        return text
    }

    func bool(_ key: String) -> Bool? {
        guard let node = node(key) else { return nil }
        guard case .bool(let value) = node.value else {
            fail(key, "expected true or false, found \(node.kindName)")
            return nil
        }
        return value
    }

    func int(_ key: String, minimum: Int, meaning: String) -> Int? {
        guard let node = node(key) else { return nil }
        guard case .number(let number) = node.value else {
            fail(key, "expected a whole number, found \(node.kindName)")
            return nil
        }
        guard let value = number.integer else {
            fail(key, "expected a whole number, found \(number.value)")
            return nil
        }
        guard value >= minimum else {
            fail(key, "is \(value), but \(meaning)")
            return nil
        }
        return value
    }

    /// "500ms", "10s", "10m", "1h" or a number of seconds; must be above zero.
    func duration(_ key: String) -> Double? {
        guard let node = node(key) else { return nil }
        let seconds: Double
        switch node.value {
        case .number(let number):
            seconds = number.value
        case .string(let text):
            do { seconds = try DurationParser.seconds(from: text) } catch {
                fail(key, "\(error)")
                return nil
            }
        default:
            fail(key, "expected a duration such as \"10s\", found \(node.kindName)")
            return nil
        }
        guard seconds > 0 else {
            fail(key, "must be longer than zero")
            return nil
        }
        return seconds
    }

    func choice<Choice: RawRepresentable & CaseIterable>(_ key: String, of type: Choice.Type) -> Choice?
    where Choice.RawValue == String {
        guard let node = node(key) else { return nil }
        return ObjectReader.choice(node, at: keyPath(key), context: context, of: type)
    }

    static func choice<Choice: RawRepresentable & CaseIterable>(
        _ node: JSON5Node, at path: KeyPath, context: DecodingContext, of type: Choice.Type
    ) -> Choice? where Choice.RawValue == String {
        let names = Choice.allCases.map(\.rawValue)
        let listed = names.map { "\"\($0)\"" }.joined(separator: ", ")
        guard let text = string(node, at: path, context: context) else { return nil }
        if let value = Choice(rawValue: text) { return value }
        var message = "\"\(text)\" is not one of \(listed)"
        if let guess = NearMiss.suggestion(for: text, among: names) { message += " (did you mean \"\(guess)\"?)" }
        context.fail(path, at: node.position, message)
        return nil
    }

    /// A string turned into a value by a parser that throws `ValueError`.
    func parsed<Value>(_ key: String, _ parse: (String) throws -> Value) -> Value? {
        guard let node = node(key) else { return nil }
        return ObjectReader.parsed(node, at: keyPath(key), context: context, parse)
    }

    static func parsed<Value>(_ node: JSON5Node, at path: KeyPath, context: DecodingContext,
                              _ parse: (String) throws -> Value) -> Value? {
        guard let text = string(node, at: path, context: context) else { return nil }
        do {
            return try parse(text)
        } catch {
            context.fail(path, at: node.position, "\(error)")
            return nil
        }
    }

    /// The elements of an array with their paths; nil (after reporting) when it is not one.
    func array(_ key: String) -> [(node: JSON5Node, path: KeyPath)]? {
        guard let node = node(key) else { return nil }
        guard case .array(let elements) = node.value else {
            fail(key, "expected an array [ ... ], found \(node.kindName)")
            return nil
        }
        return elements.enumerated().map { ($0.element, keyPath(key).appending($0.offset)) }
    }

    /// Whether the key holds an array with elements, without reporting anything.
    func isNonEmptyArray(_ key: String) -> Bool {
        if case .array(let elements)? = node(key)?.value { return !elements.isEmpty }
        return false
    }

    /// An array of values parsed from strings; bad elements are reported and skipped.
    func parsedArray<Value>(_ key: String, _ parse: (String) throws -> Value) -> [Value]? {
        guard let elements = array(key) else { return nil }
        return elements.compactMap { ObjectReader.parsed($0.node, at: $0.path, context: context, parse) }
    }
}
