/// RFC 9651 (Structured Field Values for HTTP) as values: what the signature and digest code
/// read from `Signature-Input`, `Signature`, `Content-Digest` and `Accept-Signature`, and write
/// back. One model for parsing and serializing, so what we sign is what we send.
public enum StructuredBareItem: Equatable, Sendable {
    case integer(Int64)
    /// A decimal in thousandths: RFC 9651 allows at most three fractional digits.
    case decimal(thousandths: Int64)
    case string(String)
    case token(String)
    case byteSequence([UInt8])
    case boolean(Bool)
    /// Seconds since the epoch (RFC 9651 §3.3.7).
    case date(Int64)
    /// Unicode text (RFC 9651 §3.3.8).
    case displayString(String)
}

/// Parameters and dictionaries are ordered maps: a repeated key keeps its first place and takes
/// the last value (RFC 9651 §4.2.3.2, §4.2.2).
public struct StructuredMap<Value: Equatable & Sendable>: Equatable, Sendable {
    public private(set) var entries: [(key: String, value: Value)] = []

    public init() {}

    public init(_ entries: [(String, Value)]) {
        for (key, value) in entries { self[key] = value }
    }

    public subscript(key: String) -> Value? {
        get { entries.first { $0.key == key }?.value }
        set {
            if let index = entries.firstIndex(where: { $0.key == key }) {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append((key, newValue))
            }
        }
    }

    public var isEmpty: Bool { entries.isEmpty }
    public var keys: [String] { entries.map(\.key) }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.entries.count == rhs.entries.count && zip(lhs.entries, rhs.entries).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}

public typealias StructuredParameters = StructuredMap<StructuredBareItem>

public struct StructuredItem: Equatable, Sendable {
    public var bare: StructuredBareItem
    public var parameters: StructuredParameters

    public init(_ bare: StructuredBareItem, parameters: StructuredParameters = StructuredParameters()) {
        self.bare = bare
        self.parameters = parameters
    }
}

public struct StructuredInnerList: Equatable, Sendable {
    public var items: [StructuredItem]
    public var parameters: StructuredParameters

    public init(_ items: [StructuredItem], parameters: StructuredParameters = StructuredParameters()) {
        self.items = items
        self.parameters = parameters
    }
}

/// A member of a list or dictionary.
public enum StructuredMember: Equatable, Sendable {
    case item(StructuredItem)
    case innerList(StructuredInnerList)
}

public typealias StructuredList = [StructuredMember]
public typealias StructuredDictionary = StructuredMap<StructuredMember>

/// Which of the three top-level types a field is (RFC 9651 §3): a field's definition says.
public enum StructuredFieldType: String, Sendable {
    case item, list, dictionary
}

/// A parsed field value of any top-level type.
public enum StructuredFieldValue: Equatable, Sendable {
    case item(StructuredItem)
    case list(StructuredList)
    case dictionary(StructuredDictionary)
}

/// Why a value is not a valid structured field, with the byte offset where parsing stopped.
public struct StructuredFieldError: Error, Equatable, CustomStringConvertible {
    public let reason: String
    public let offset: Int

    public var description: String { "\(reason) at byte \(offset)" }
}
