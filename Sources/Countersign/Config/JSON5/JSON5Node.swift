/// Where a token starts in the configuration text, 1-based, so errors can point at it.
public struct SourcePosition: Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "line \(line), column \(column)" }
}

/// A JSON5 number as written: the parser keeps whether it was integral so the decoder can
/// refuse `1.5` where a count is expected instead of silently truncating it.
public struct JSON5Number: Sendable, Equatable {
    public var value: Double
    /// Set when the literal had no fraction or exponent and fits in an `Int`.
    public var integer: Int?
}

/// One member of an object, keeping the key's own position for "unknown key" errors.
public struct JSON5Member: Sendable {
    public var key: String
    public var keyPosition: SourcePosition
    public var value: JSON5Node
}

public enum JSON5Value: Sendable {
    case object([JSON5Member])
    case array([JSON5Node])
    case string(String)
    case number(JSON5Number)
    case bool(Bool)
    case null
}

/// A parsed value together with the position where it starts.
public struct JSON5Node: Sendable {
    public var value: JSON5Value
    public var position: SourcePosition

    /// The kind of value with its article, as used in "expected a string, found a number".
    public var kindName: String {
        switch value {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }
}

extension JSON5Node {
    /// The value at a key path, for reporting the line of a problem found after decoding.
    func node(at path: KeyPath) -> JSON5Node? {
        var current = self
        for component in path.components {
            switch (component, current.value) {
            case (.key(let key), .object(let members)):
                guard let member = members.first(where: { $0.key == key }) else { return nil }
                current = member.value
            case (.index(let index), .array(let elements)):
                guard elements.indices.contains(index) else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }
}
