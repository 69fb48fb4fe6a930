/// The changes a proxy makes to a received field section, written out in one pass over its
/// stored bytes: hop-by-hop fields left out, a few fields given a new value where they first
/// stood (their repeats dropped) or removed, new fields appended after the received ones.
/// No copy of the section is made: the output is the only allocation on the usual path.
///
/// The edits apply to the received fields only; appended fields are written as given.
struct FieldRewrite {
    private enum Edit {
        case set(String)
        /// A value already in wire bytes (an auth answer: no String is made of a secret).
        case setBytes([UInt8])
        case remove
    }

    /// The name an edit is for.
    private enum Name {
        /// One the proxy acts on, written as `FieldName.spelling`.
        case known(FieldName)
        /// Any name, written as given; `known` is what `FieldName` makes of it.
        case given(String, known: FieldName)

        init(_ text: String) { self = .given(text, known: FieldName(text)) }

        var known: FieldName {
            switch self {
            case .known(let known), .given(_, let known): known
            }
        }

        func isSame(as other: Name) -> Bool {
            switch (self, other) {
            case (.given(let left, .other), .given(let right, .other)): ASCIICase.equal(left, right)
            default: known == other.known
            }
        }

        /// Whether a received field called `bytes` (recognised as `known`) is this name.
        func names(_ bytes: ArraySlice<UInt8>, known: FieldName) -> Bool {
            switch self {
            case .given(let text, .other): known == .other && ASCIICase.equal(bytes, text.utf8)
            default: known == self.known
            }
        }

        func write(to out: inout [UInt8]) {
            switch self {
            case .known(let known):
                out.append(spelled: known.spelling)
            case .given(let text, _):
                out.append(contentsOf: text.utf8)
            }
        }
    }

    private enum Addition {
        /// Always written: the proxy's own fields, spelled in the code.
        case field(name: StaticString, value: StaticString)
        /// Always written, its value already in wire bytes (an auth answer).
        case fieldBytes(name: FieldName, value: [UInt8])
        /// Written with the edit's value when no received field took it (`setOrAppend`).
        case unlessSetInPlace(edit: Int)
    }

    private let received: HeaderFields
    private let filter: HopByHop.Filter
    /// Inline, not arrays: a forwarded head makes at most a handful of changes, and two
    /// arrays per head were two allocations per message.
    private var edits = SmallList<(name: Name, edit: Edit)>()
    /// The names `edits` hold (`.other` for any name the proxy does not act on), so a received
    /// field no edit is for is passed over on one bit.
    private var edited = FieldNames()
    private var additions = SmallList<Addition>()

    init(_ received: HeaderFields, keepUpgrade: Bool) {
        self.received = received
        filter = HopByHop.Filter(received, keepUpgrade: keepUpgrade)
        if let collapsed = HopByHop.collapsedContentLength(received) { edit(.known(.contentLength), .set(collapsed)) }
        if filter.addsConnectionUpgrade { append("Connection", "upgrade") }
    }

    /// The first `name` field gets `value` in its place; appended when there is none.
    mutating func setOrAppend(_ name: FieldName, _ value: String) { setOrAppend(.known(name), edit: .set(value)) }

    mutating func setOrAppend(_ name: String, _ value: String) { setOrAppend(Name(name), edit: .set(value)) }

    mutating func setOrAppend(_ name: FieldName, bytes value: [UInt8]) { setOrAppend(.known(name), edit: .setBytes(value)) }

    private mutating func setOrAppend(_ name: Name, edit value: Edit) {
        let index = edit(name, value)
        if additions.firstIndex(where: { if case .unlessSetInPlace(index) = $0 { true } else { false } }) == nil {
            additions.append(.unlessSetInPlace(edit: index))
        }
    }

    mutating func remove(_ name: FieldName) { edit(.known(name), .remove) }

    mutating func remove(_ name: String) { edit(Name(name), .remove) }

    /// Rewrites a list-valued field as one field of its non-empty elements where the first
    /// one stood (`Transfer-Encoding: ,chunked` becomes `chunked`); removed when it has none.
    mutating func normalizeList(_ name: FieldName) {
        let elements = received.listElements(name)
        edit(.known(name), elements.isEmpty ? .remove : .set(elements.joined(separator: ", ")))
    }

    mutating func append(_ name: StaticString, _ value: StaticString) { additions.append(.field(name: name, value: value)) }

    mutating func append(_ name: FieldName, bytes value: [UInt8]) { additions.append(.fieldBytes(name: name, value: value)) }

    /// A later edit of the same name replaces the earlier one.
    @discardableResult
    private mutating func edit(_ name: Name, _ edit: Edit) -> Int {
        if let index = edits.firstIndex(where: { $0.name.isSame(as: name) }) {
            edits[index].edit = edit
            return index
        }
        edited.insert(name.known)
        return edits.append((name, edit))
    }

    /// The edit for received field `index`, if one is for its name.
    private func editIndex(for index: Int) -> Int? {
        let known = received.knownName(index)
        guard edited.contains(known) else { return nil }
        let name = received.nameBytes(index)
        return edits.firstIndex { $0.name.names(name, known: known) }
    }

    /// Writes every field line and the blank line that ends the head.
    func write(to out: inout [UInt8]) {
        var applied: UInt8 = 0  // one bit per edit
        var run = HeaderFields.LineRun()
        for index in 0..<received.count {
            if filter.drops(index, in: received) { continue }
            guard let editIndex = editIndex(for: index) else {
                received.write(index, extending: &run, to: &out)
                continue
            }
            received.flush(&run, to: &out)
            let bit: UInt8 = 1 << editIndex
            if applied & bit != 0 { continue }  // a repeat of a field already set or removed
            applied |= bit
            Self.write(edits[editIndex].edit, to: &out) { $0.append(contentsOf: received.nameBytes(index)) }
        }
        received.flush(&run, to: &out)
        for index in 0..<additions.count {
            switch additions[index] {
            case .field(let name, let value):
                out.append(spelled: name)
                out.append(COLON); out.append(SP)
                out.append(spelled: value)
                out.append(CR); out.append(LF)
            case .fieldBytes(let name, let value):
                out.append(spelled: name.spelling)
                out.append(COLON); out.append(SP)
                out.append(contentsOf: value)
                out.append(CR); out.append(LF)
            case .unlessSetInPlace(let editIndex):
                guard applied & (1 << editIndex) == 0 else { continue }
                Self.write(edits[editIndex].edit, to: &out, name: edits[editIndex].name.write)
            }
        }
        out.append(CR); out.append(LF)
    }

    /// The line a set edit writes (`writeName` puts the name down); nothing for a removal.
    private static func write(_ edit: Edit, to out: inout [UInt8], name writeName: (inout [UInt8]) -> Void) {
        switch edit {
        case .set(let value):
            writeName(&out)
            out.append(COLON); out.append(SP)
            HeaderFields.appendLatin1(value, to: &out)
        case .setBytes(let value):
            writeName(&out)
            out.append(COLON); out.append(SP)
            out.append(contentsOf: value)
        case .remove:
            return
        }
        out.append(CR); out.append(LF)
    }

}
