/// One field line as the sender wrote it: the name keeps its case, the value its bytes
/// (decoded as ISO-8859-1 so that obs-text survives a round trip unchanged).
public struct HeaderField: Equatable, Sendable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }

    public func hasName(_ other: String) -> Bool {
        name.utf8.count == other.utf8.count && ASCIICase.equal(name, other)
    }
}

/// An ordered list of field lines. Order and case are preserved because legacy servers
/// care; lookups compare names case-insensitively (RFC 9110 §5.1).
public struct HeaderFields: Sequence, Equatable, Sendable {
    public private(set) var fields: [HeaderField]

    public init(_ fields: [HeaderField] = []) {
        self.fields = fields
    }

    public var count: Int { fields.count }
    public func makeIterator() -> IndexingIterator<[HeaderField]> { fields.makeIterator() }

    /// The first value of `name`, if present.
    public subscript(name: String) -> String? {
        fields.first { $0.hasName(name) }?.value
    }

    public func values(_ name: String) -> [String] {
        fields.filter { $0.hasName(name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool {
        fields.contains { $0.hasName(name) }
    }

    public func contains(where predicate: (HeaderField) -> Bool) -> Bool {
        fields.contains(where: predicate)
    }

    /// The comma-separated list elements of every `name` field, trimmed, empty ones dropped.
    public func listElements(_ name: String) -> [String] {
        values(name).flatMap { HeaderFields.splitList($0) }
    }

    /// Whether a list-valued field (e.g. `Connection`) contains `token`, case-insensitively.
    /// Scans in place: this runs several times per request.
    public func listContains(_ name: String, token: String) -> Bool {
        fields.contains { field in
            field.hasName(name) && Self.listValue(field.value, hasElement: { ASCIICase.equalTrimmingOWS($0, token) })
        }
    }

    /// Whether one comma-separated element of a list value (surrounding OWS still on it,
    /// empty elements skipped) satisfies `predicate`; the value is scanned in place.
    static func listValue(_ value: String, hasElement predicate: (Substring.UTF8View) -> Bool) -> Bool {
        value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true).contains(where: predicate)
    }

    public mutating func append(_ name: String, _ value: String) {
        fields.append(HeaderField(name, value))
    }

    public mutating func removeAll(_ name: String) {
        fields.removeAll { $0.hasName(name) }
    }

    public mutating func removeAll(where predicate: (HeaderField) -> Bool) {
        fields.removeAll(where: predicate)
    }

    /// Replaces the value of the first `name` field in place (keeping its position and the
    /// sender's spelling of the name) and drops any others; appends when absent.
    public mutating func replaceOrAppend(_ name: String, _ value: String) {
        if let index = fields.firstIndex(where: { $0.hasName(name) }) {
            fields[index].value = value
            var seen = false
            fields.removeAll { field in
                guard field.hasName(name) else { return false }
                defer { seen = true }
                return seen
            }
        } else {
            append(name, value)
        }
    }

    /// Rewrites a list-valued field as one field holding its non-empty elements, where the
    /// first one stood (`Transfer-Encoding: ,chunked` becomes `chunked`).
    public mutating func normalizeList(_ name: String) {
        let elements = listElements(name)
        if elements.isEmpty { removeAll(name) } else { replaceOrAppend(name, elements.joined(separator: ", ")) }
    }

    static func splitList(_ value: String) -> [String] {
        value.split(separator: ",", omittingEmptySubsequences: true).compactMap { element in
            let trimmed = element.trimmingOWS()
            return trimmed.isEmpty ? nil : String(trimmed)
        }
    }
}

/// ASCII-only case folding: header names and tokens are ASCII, and locale-aware
/// lowercasing would be both slow and wrong (think Turkish dotless i).
public enum ASCIICase {
    /// Two field names or tokens: usually written in the same case, so an exact match is
    /// tried first; otherwise the contiguous UTF-8 is compared byte by byte.
    public static func equal(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        var a = a, b = b
        return a.withUTF8 { left in
            b.withUTF8 { right in
                guard left.count == right.count else { return false }
                for index in 0..<left.count where lower(left[index]) != lower(right[index]) { return false }
                return true
            }
        }
    }

    public static func equal(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case let (x?, y?): if lower(x) != lower(y) { return false }
            default: return false
            }
        }
    }

    /// `element` with its surrounding SP/HTAB ignored equals `token`, ignoring ASCII case.
    static func equalTrimmingOWS(_ element: Substring.UTF8View.SubSequence, _ token: String) -> Bool {
        var start = element.startIndex
        var end = element.endIndex
        while start < end, element[start] == 0x20 || element[start] == 0x09 { start = element.index(after: start) }
        while end > start {
            let last = element[element.index(before: end)]
            guard last == 0x20 || last == 0x09 else { break }
            end = element.index(before: end)
        }
        var tokenBytes = token.utf8.makeIterator()
        var index = start
        while index < end {
            guard let expected = tokenBytes.next(), lower(element[index]) == lower(expected) else { return false }
            index = element.index(after: index)
        }
        return tokenBytes.next() == nil
    }

    public static func lowercased(_ s: some StringProtocol) -> String {
        String(decoding: s.utf8.map(lower), as: UTF8.self)
    }

    @inline(__always) public static func lower(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }
}

extension StringProtocol {
    /// Drops leading and trailing SP / HTAB (the OWS of RFC 9110 §5.6.3).
    func trimmingOWS() -> Substring {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return slice
    }
}
