/// Reading fields: by name (a `FieldName` the parser recognised, or any name as text),
/// values, counts and list elements (RFC 9110 §5.6.1).
extension HeaderFields {
    /// The first value of `name`, if present.
    public subscript(name: String) -> String? {
        guard let index = firstIndex(named: name) else { return nil }
        return Self.latin1(valueBytes(index))
    }

    public subscript(name: FieldName) -> String? {
        guard let index = firstIndex(name) else { return nil }
        return Self.latin1(valueBytes(index))
    }

    /// Whether the first value of `name` is exactly `bytes`: compared where it is stored, with
    /// no string made of it (a request's `Host` inside an intercepted tunnel).
    public func firstValue(_ name: FieldName, equals bytes: [UInt8]) -> Bool {
        guard let index = firstIndex(name) else { return false }
        let value = valueBytes(index)
        guard value.count == bytes.count else { return false }
        return value.withUnsafeBufferPointer { stored in
            bytes.withUnsafeBufferPointer { expected in
                for offset in 0..<expected.count where stored[offset] != expected[offset] { return false }
                return true
            }
        }
    }

    public func values(_ name: FieldName) -> [String] {
        var values: [String] = []
        var next = firstIndex(name)
        while let index = next {
            values.append(Self.latin1(valueBytes(index)))
            next = firstIndex(name, from: index + 1)
        }
        return values
    }

    public func values(_ name: String) -> [String] {
        var values: [String] = []
        var next = firstIndex(named: name)
        while let index = next {
            values.append(Self.latin1(valueBytes(index)))
            next = firstIndex(named: name, from: index + 1)
        }
        return values
    }

    /// The values of `name` as received, in order, without making a `String` of any.
    public func forEachValue(named name: String, _ body: (ArraySlice<UInt8>) -> Void) {
        var next = firstIndex(named: name)
        while let index = next {
            body(valueBytes(index))
            next = firstIndex(named: name, from: index + 1)
        }
    }

    /// The same for a name the parser recognised: a byte compared per field, nothing when absent.
    public func forEachValue(_ name: FieldName, _ body: (ArraySlice<UInt8>) -> Void) {
        var next = firstIndex(name)
        while let index = next {
            body(valueBytes(index))
            next = firstIndex(name, from: index + 1)
        }
    }

    public func contains(_ name: String) -> Bool {
        firstIndex(named: name) != nil
    }

    public func contains(_ name: FieldName) -> Bool {
        present.contains(name)
    }

    /// Whether some field is called one of `names`.
    func containsAny(of names: FieldNames) -> Bool {
        present.intersects(names)
    }

    /// How many fields are called `name`.
    public func count(of name: String) -> Int {
        var count = 0
        var next = firstIndex(named: name)
        while let index = next {
            count += 1
            next = firstIndex(named: name, from: index + 1)
        }
        return count
    }

    public func count(of name: FieldName) -> Int {
        guard present.contains(name) else { return 0 }
        return slots.reduce(0) { $0 + ($1.known == name ? 1 : 0) }
    }

    public func contains(where predicate: (HeaderField) -> Bool) -> Bool {
        slots.contains { predicate(field($0)) }
    }

    /// The comma-separated list elements of every `name` field, trimmed, empty ones dropped.
    public func listElements(_ name: String) -> [String] {
        values(name).flatMap { HeaderFields.splitList($0) }
    }

    public func listElements(_ name: FieldName) -> [String] {
        values(name).flatMap { HeaderFields.splitList($0) }
    }

    /// Whether a list-valued field (e.g. `Connection`) contains `token`, case-insensitively.
    /// Scans the stored bytes in place: this runs several times per request.
    public func listContains(_ name: String, token: String) -> Bool {
        listContains(FieldName(name), named: name, token: token)
    }

    public func listContains(_ name: FieldName, token: String) -> Bool {
        // Most sections lack the field (`Expect` is asked of every request): told by a bit test,
        // before the token's bytes are taken (~50 instructions).
        guard present.contains(name) else { return false }
        return ASCIICase.withBytes(of: token) { token in anyListElement(of: name) { ASCIICase.sameIgnoringCase($0, token) } }
    }

    private func listContains(_ known: FieldName, named name: String, token: String) -> Bool {
        if known != .other { return listContains(known, token: token) }
        var next = firstIndex(named: name)
        while let index = next {
            let found = ASCIICase.withBytes(of: token) { token in
                valueBytes(index).withUnsafeBufferPointer { Self.listValue($0, hasElement: { ASCIICase.sameIgnoringCase($0, token) }) }
            }
            if found { return true }
            next = firstIndex(named: name, from: index + 1)
        }
        return false
    }

    /// Whether an element of any `Connection` field satisfies `predicate` (scanned in place).
    func anyConnectionElement(_ predicate: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        anyListElement(of: .connection, predicate)
    }

    private func anyListElement(of name: FieldName, _ predicate: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        anyValue(of: name) { Self.listValue($0, hasElement: predicate) }
    }

    /// Whether one comma-separated element of a list value satisfies `predicate`, which is
    /// given each element without its surrounding OWS (empty ones skipped); the value is scanned
    /// in place, through its buffer: the `Connection` of every message is asked about a few
    /// times, and slices cost a retain, a release and a bounds check per byte.
    static func listValue(_ value: UnsafeBufferPointer<UInt8>, hasElement predicate: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        var start = 0
        while start < value.count {
            var end = start
            while end < value.count, value[end] != UInt8(ascii: ",") { end += 1 }
            var first = start, last = end
            while first < last, value[first] == SP || value[first] == HTAB { first += 1 }
            while last > first, value[last - 1] == SP || value[last - 1] == HTAB { last -= 1 }
            if last > first, predicate(UnsafeBufferPointer(rebasing: value[first..<last])) { return true }
            start = end + 1
        }
        return false
    }
}
