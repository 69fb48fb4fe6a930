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
///
/// Stored as byte ranges into one buffer (a parsed head's field lines, copied once, then
/// whatever is appended): names and values become `String`s only when asked for, so
/// forwarding a head costs no allocation per field. Values are ISO-8859-1 both ways.
public struct HeaderFields: Sequence, Equatable, Sendable {
    /// One field: where its name and value lie in `storage`, and which name the proxy acts
    /// on it is (always what `FieldName` makes of the name's bytes).
    struct Slot: Sendable {
        var name: Range<Int>
        var value: Range<Int>
        var known: FieldName
    }

    private var storage: [UInt8]
    /// Where the fields' bytes begin in `storage`: a parsed request keeps its target before
    /// them, in the same copy (`RequestTargetText`), and nothing here reads those bytes.
    private var fieldsStart = 0
    private(set) var slots: [Slot]
    /// The `known` of every slot: a lookup of a name the section lacks ends here.
    private(set) var present: FieldNames
    /// What the `Connection` fields say, read again whenever the fields change (`readConnection`).
    private(set) var connection: ConnectionOptions = []

    public init(_ fields: [HeaderField] = []) {
        storage = []
        slots = []
        present = FieldNames()
        for field in fields { append(field.name, field.value) }
    }

    /// Fields already located and recognised in `bytes` (the parser's result).
    init(bytes: [UInt8], slots: [Slot], present: FieldNames, fieldsStart: Int = 0) {
        storage = bytes
        self.fieldsStart = fieldsStart
        self.slots = slots
        self.present = present
        readConnection()
    }

    /// `connection` made again from the stored `Connection` values, after a change that may
    /// have touched one (a bit test for a section without the field, most of them).
    private mutating func readConnection() {
        var options: ConnectionOptions = []
        _ = anyValue(of: .connection) { value in
            options.formUnion(ConnectionOptions(list: value))
            return false
        }
        connection = options
    }

    public var fields: [HeaderField] { slots.map(field) }
    public var count: Int { slots.count }
    /// The most the fields take as lines (`Name: value` CRLF each): every slot's name and value
    /// lie apart in the storage, and a line adds four bytes to them. A forwarded head's
    /// writer is given no more room than this (`FieldRewrite.byteBound`).
    var byteCount: Int { storage.count - fieldsStart + slots.count * 4 }

    public struct Iterator: IteratorProtocol {
        fileprivate let headers: HeaderFields
        fileprivate var index = 0
        public mutating func next() -> HeaderField? {
            guard index < headers.slots.count else { return nil }
            defer { index += 1 }
            return headers.field(headers.slots[index])
        }
    }

    public func makeIterator() -> Iterator { Iterator(headers: self) }

    public static func == (lhs: HeaderFields, rhs: HeaderFields) -> Bool {
        lhs.slots.count == rhs.slots.count && zip(lhs.slots, rhs.slots).allSatisfy { left, right in
            lhs.storage[left.name] == rhs.storage[right.name] && lhs.storage[left.value] == rhs.storage[right.value]
        }
    }

    // MARK: Bytes

    func field(_ slot: Slot) -> HeaderField {
        HeaderField(String(decoding: storage[slot.name], as: UTF8.self), Self.latin1(storage[slot.value]))
    }

    static func latin1(_ bytes: ArraySlice<UInt8>) -> String {
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        var scalars = String.UnicodeScalarView()
        for byte in bytes { scalars.append(Unicode.Scalar(byte)) }
        return String(scalars)
    }

    /// The inverse of `latin1` (`Latin1`), appended to `out`.
    public static func appendLatin1(_ text: String, to out: inout [UInt8]) {
        Latin1.encode(text) { out.append(contentsOf: $0) }
    }

    /// The name of field `index` as bytes (no copy).
    func nameBytes(_ index: Int) -> ArraySlice<UInt8> { storage[slots[index].name] }
    func valueBytes(_ index: Int) -> ArraySlice<UInt8> { storage[slots[index].value] }

    /// Calls `body` with each field's index, name and value, as the stored bytes (no copy).
    func forEachFieldBytes(_ body: (_ index: Int, _ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) -> Void) {
        storage.withUnsafeBufferPointer { bytes in
            for (index, slot) in slots.enumerated() {
                body(index, UnsafeBufferPointer(rebasing: bytes[slot.name]), UnsafeBufferPointer(rebasing: bytes[slot.value]))
            }
        }
    }

    /// Whether the value of some `name` field satisfies `body` (given the stored bytes, no copy).
    func anyValue(of name: FieldName, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        guard present.contains(name) else { return false }
        return storage.withUnsafeBufferPointer { bytes in
            for slot in slots where slot.known == name {
                if body(UnsafeBufferPointer(rebasing: bytes[slot.value])) { return true }
            }
            return false
        }
    }

    /// Which name the proxy acts on field `index` is (`.other` for the rest).
    func knownName(_ index: Int) -> FieldName { slots[index].known }

    /// Whether field `index` is called `name`, ignoring ASCII case.
    func hasName(_ index: Int, _ name: String) -> Bool {
        ASCIICase.equal(storage[slots[index].name], name.utf8)
    }

    /// The first field at or after `start` called `name`: a byte compared per field, and
    /// nothing at all when the section has none (most lookups, since most are for framing or
    /// hop-by-hop fields a message seldom carries).
    public func firstIndex(_ name: FieldName, from start: Int = 0) -> Int? {
        guard present.contains(name) else { return nil }
        var index = start
        while index < slots.count {
            if slots[index].known == name { return index }
            index += 1
        }
        return nil
    }

    /// The first field at or after `start` called `name`, ignoring ASCII case. A name the
    /// proxy acts on is looked up by `FieldName`; any other is compared as bytes, with only
    /// the fields of other names, most passed over on their length alone.
    func firstIndex(named name: String, from start: Int = 0) -> Int? {
        guard start < slots.count else { return nil }
        let known = FieldName(name)
        if known != .other { return firstIndex(known, from: start) }
        guard present.contains(.other) else { return nil }
        // The name's own bytes when it has them (a literal, a native string): copying it
        // into a `var` for `withUTF8` cost a retain and a release per lookup.
        if let found = name.utf8.withContiguousStorageIfAvailable({ firstIndex(other: $0, from: start) }) { return found }
        var name = name
        return name.withUTF8 { firstIndex(other: $0, from: start) }
    }

    private func firstIndex(other expected: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        storage.withUnsafeBufferPointer { bytes in
            for index in start..<slots.count where slots[index].known == .other {
                let range = slots[index].name
                if range.count == expected.count, ASCIICase.equal(UnsafeBufferPointer(rebasing: bytes[range]), expected) { return index }
            }
            return nil
        }
    }

    /// Whether `writeLines` writes a received line as it came, or the caller has written
    /// what takes its place (nothing, for a field left out).
    enum LineFate {
        case kept
        case replaced
    }

    /// Writes the field lines, each as `Name: value` CRLF: a field whose name is not in
    /// `attended` (unless `attendAll`) as it came, and for the others `attend` decides. Lines
    /// already in that form that follow one another in the storage go out as one copy, so an
    /// unchanged field costs a few compares; the output is byte for byte what writing each
    /// line would give. `attend` is given `context` (borrowed: a closure that captured a
    /// rewrite copied it, edits and all, for every head).
    func writeLines<Context>(to out: inout HeadWriter, attending attended: FieldNames, attendAll: Bool, context: Context,
                             _ attend: (_ context: Context, _ index: Int, _ known: FieldName, _ out: inout HeadWriter) -> LineFate) {
        storage.withUnsafeBufferPointer { bytes in
            slots.withUnsafeBufferPointer { slots in
                var run = LineRun()
                for index in slots.indices {
                    let name = slots[index].name, value = slots[index].value, known = slots[index].known
                    if attendAll || attended.contains(known) {
                        run.flush(bytes, to: &out)
                        if attend(context, index, known, &out) == .replaced { continue }
                    }
                    guard value.lowerBound == name.upperBound &+ 2,
                          bytes[name.upperBound] == COLON, bytes[name.upperBound &+ 1] == SP else {
                        // Written differently (`Name:value`, a value set in place): normalised on its own.
                        run.flush(bytes, to: &out)
                        out.put(UnsafeBufferPointer(rebasing: bytes[name]))
                        out.putColonSpace()
                        out.put(UnsafeBufferPointer(rebasing: bytes[value]))
                        out.putCRLF()
                        continue
                    }
                    run.add(name.lowerBound..<value.upperBound, of: bytes, to: &out)
                }
                run.flush(bytes, to: &out)
            }
        }
    }

    /// Lines not yet written that follow one another in the storage, each as `Name: value`
    /// CRLF: `bytes[start..<end]` and the last line's CRLF.
    private struct LineRun {
        private var start = 0, end = -1

        /// Extends the run by `line` when the run's last CRLF is all that lies between them;
        /// else writes the run and begins a new one.
        @inline(__always)
        mutating func add(_ line: Range<Int>, of bytes: UnsafeBufferPointer<UInt8>, to out: inout HeadWriter) {
            if end >= 0, end &+ 2 == line.lowerBound, bytes[end] == CR, bytes[end &+ 1] == LF {
                end = line.upperBound
                return
            }
            flush(bytes, to: &out)
            start = line.lowerBound
            end = line.upperBound
        }

        @inline(__always)
        mutating func flush(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout HeadWriter) {
            guard end >= 0 else { return }
            out.put(UnsafeBufferPointer(rebasing: bytes[start..<end]))
            out.putCRLF()
            end = -1
        }
    }

    /// Writes the name of field `index` as the sender spelled it.
    func writeName(_ index: Int, to out: inout HeadWriter) {
        let name = slots[index].name
        storage.withUnsafeBufferPointer { out.put(UnsafeBufferPointer(rebasing: $0[name])) }
    }

    /// Drops the fields whose index satisfies `predicate` (one pass, in place; no bytes move).
    /// The predicate sees the indices as they were before the call.
    mutating func removeSlots(where predicate: (Int) -> Bool) {
        var kept = 0
        var present = FieldNames()
        for index in slots.indices where !predicate(index) {
            if kept != index { slots[kept] = slots[index] }
            present.insert(slots[kept].known)
            kept += 1
        }
        if kept < slots.count { slots.removeLast(slots.count - kept) }
        self.present = present
        readConnection()
    }

    // MARK: Changes

    public mutating func append(_ name: String, _ value: String) {
        append(name) { Self.appendLatin1(value, to: &$0) }
    }

    /// A field whose value `writeValue` adds at the end of the storage.
    private mutating func append(_ name: String, writeValue: (inout [UInt8]) -> Void) {
        let nameStart = storage.count
        storage.append(contentsOf: name.utf8)
        let valueStart = storage.count
        writeValue(&storage)
        let known = FieldName(name)
        slots.append(Slot(name: nameStart..<valueStart, value: valueStart..<storage.count, known: known))
        present.insert(known)
        if known == .connection { readConnection() }
    }

    public mutating func removeAll(_ name: String) {
        let source = self
        removeSlots { source.hasName($0, name) }
    }

    public mutating func removeAll(where predicate: (HeaderField) -> Bool) {
        let source = self
        removeSlots { predicate(source.field(source.slots[$0])) }
    }

    /// Replaces the value of the first `name` field in place (keeping its position and the
    /// sender's spelling of the name) and drops any others; appends when absent.
    public mutating func replaceOrAppend(_ name: String, _ value: String) {
        replaceOrAppend(name) { Self.appendLatin1(value, to: &$0) }
    }

    /// `replaceOrAppend` with a value already in wire bytes (an auth answer): spliced as it is.
    public mutating func replaceOrAppend(_ name: String, bytes value: [UInt8]) {
        replaceOrAppend(name) { $0.append(contentsOf: value) }
    }

    private mutating func replaceOrAppend(_ name: String, writeValue: (inout [UInt8]) -> Void) {
        guard let first = firstIndex(named: name) else {
            append(name, writeValue: writeValue)
            return
        }
        let valueStart = storage.count
        writeValue(&storage)
        slots[first].value = valueStart..<storage.count
        let source = self
        removeSlots { $0 != first && source.hasName($0, name) }
    }

    /// Gives each field's value bytes (with its name) to `rewrite`; a non-nil result replaces the
    /// value in place, name and position kept. Used for the rare rewrites that need every value
    /// (placeholders), so the common path never copies a field.
    public mutating func rewriteValues(_ rewrite: (_ name: ArraySlice<UInt8>, _ value: ArraySlice<UInt8>) throws -> [UInt8]?) rethrows {
        for index in slots.indices {
            guard let replacement = try rewrite(storage[slots[index].name], storage[slots[index].value]) else { continue }
            let valueStart = storage.count
            storage.append(contentsOf: replacement)
            slots[index].value = valueStart..<storage.count
        }
        readConnection()
    }

    /// The stored bytes, a parsed request's target before the fields (`RequestTargetText`).
    var storageBytes: [UInt8] { storage }

    /// Whether `needle` occurs in any field name or value (one scan of the stored bytes).
    public func storageContains(_ needle: [UInt8]) -> Bool {
        storage.withUnsafeBytes { ByteSearch.contains(UnsafeRawBufferPointer(rebasing: $0[fieldsStart...]), needle) }
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

extension StringProtocol {
    /// Drops leading and trailing SP / HTAB (the OWS of RFC 9110 §5.6.3).
    func trimmingOWS() -> Substring {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return slice
    }
}
