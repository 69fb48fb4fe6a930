/// The changes a proxy makes to a received field section, written out in one pass over its
/// stored bytes: hop-by-hop fields left out, a few fields given a new value where they first
/// stood (their repeats dropped) or removed, new fields appended after the received ones.
/// No copy of the section is made: the lines go straight into the writer's memory, whose size
/// `byteBound` gives beforehand.
///
/// The edits apply to the received fields only; appended fields are written as given.
struct FieldRewrite {
    private enum Edit {
        case set(String)
        /// A value already in wire bytes (an auth answer: no String is made of a secret).
        case setBytes([UInt8])
        case remove

        /// The most its line can take, name and CRLF included.
        func byteBound(_ name: FieldName) -> Int {
            switch self {
            case .set(let value): name.spelling.utf8CodeUnitCount + value.utf8.count + 4
            case .setBytes(let value): name.spelling.utf8CodeUnitCount + value.count + 4
            case .remove: 0
            }
        }
    }

    /// A field line of the proxy's own, spelled in the code (a byte: a list of them is
    /// copied and dropped with the rewrite at no cost per element).
    enum OwnLine: UInt8 {
        case via10, via11, via2, connectionClose, connectionKeepAlive, connectionUpgrade, expectContinue

        /// The whole line, CRLF included.
        var text: StaticString {
            switch self {
            case .via10: "Via: 1.0 countersign\r\n"
            case .via11: "Via: 1.1 countersign\r\n"
            case .via2: "Via: 2 countersign\r\n"
            case .connectionClose: "Connection: close\r\n"
            case .connectionKeepAlive: "Connection: keep-alive\r\n"
            case .connectionUpgrade: "Connection: upgrade\r\n"
            case .expectContinue: "Expect: 100-continue\r\n"
            }
        }
    }

    private enum Addition {
        /// Always written.
        case line(OwnLine)
        /// Written with the edit's value when no received field took it (`setOrAppend`).
        case unlessSetInPlace(edit: UInt8)
    }

    private let received: HeaderFields
    private let filter: HopByHop.Filter
    /// Inline, not arrays: a forwarded head makes at most a handful of changes, and two
    /// arrays per head were two allocations per message.
    private var edits = SmallList<(name: FieldName, edit: Edit)>()
    /// The names a received field is looked at for: those `edits` hold, and the hop-by-hop
    /// ones when the filter drops any. Any other field (most) joins the run of copied lines.
    private var attended = FieldNames()
    private var additions = SmallList<Addition>()
    /// The most the field lines and the blank line take: the received lines as the writer
    /// gives them, plus every edit's and addition's own line.
    private(set) var byteBound: Int

    init(_ received: HeaderFields, keepUpgrade: Bool) {
        self.received = received
        filter = HopByHop.Filter(received, keepUpgrade: keepUpgrade)
        byteBound = received.byteCount + 2
        if filter.dropsAny { attended = HopByHop.alwaysHopByHop }
        if let collapsed = HopByHop.collapsedContentLength(received) { edit(.contentLength, .set(collapsed)) }
        if filter.addsConnectionUpgrade { append(.connectionUpgrade) }
    }

    /// The first `name` field gets `value` in its place; appended when there is none.
    mutating func setOrAppend(_ name: FieldName, _ value: String) { setOrAppend(name, edit: .set(value)) }

    mutating func setOrAppend(_ name: FieldName, bytes value: [UInt8]) { setOrAppend(name, edit: .setBytes(value)) }

    private mutating func setOrAppend(_ name: FieldName, edit value: Edit) {
        let index = UInt8(edit(name, value))
        if additions.firstIndex(where: { if case .unlessSetInPlace(index) = $0 { true } else { false } }) == nil {
            additions.append(.unlessSetInPlace(edit: index))
        }
    }

    mutating func remove(_ name: FieldName) { edit(name, .remove) }

    /// Rewrites a list-valued field as one field of its non-empty elements where the first
    /// one stood (`Transfer-Encoding: ,chunked` becomes `chunked`); removed when it has none.
    mutating func normalizeList(_ name: FieldName) {
        let elements = received.listElements(name)
        edit(name, elements.isEmpty ? .remove : .set(elements.joined(separator: ", ")))
    }

    /// A line of the proxy's own, after the received fields.
    mutating func append(_ line: OwnLine) {
        additions.append(.line(line))
        byteBound += line.text.utf8CodeUnitCount
    }

    /// A later edit of the same name replaces the earlier one. Each edit's line is counted in
    /// `byteBound` (a replaced one too: a bound, not the size).
    @discardableResult
    private mutating func edit(_ name: FieldName, _ edit: Edit) -> Int {
        byteBound += edit.byteBound(name)
        if let index = edits.firstIndex(where: { $0.name == name }) {
            edits[index].edit = edit
            return index
        }
        attended.insert(name)
        return edits.append((name, edit))
    }

    /// The edit for received field `index`, if one is for its name.
    private func editIndex(for known: FieldName) -> Int? {
        edits.firstIndex { $0.name == known }
    }

    /// Writes every field line and the blank line that ends the head.
    func write(to out: inout HeadWriter) {
        var applied: UInt8 = 0  // one bit per edit
        var run = HeaderFields.LineRun()
        for index in 0..<received.count {
            let known = received.knownName(index)
            guard attended.contains(known) || filter.nominatesFields else {
                received.write(index, extending: &run, to: &out)
                continue
            }
            if filter.drops(index, in: received) { continue }
            guard let editIndex = editIndex(for: known) else {
                received.write(index, extending: &run, to: &out)
                continue
            }
            received.flush(&run, to: &out)
            let bit: UInt8 = 1 << editIndex
            if applied & bit != 0 { continue }  // a repeat of a field already set or removed
            applied |= bit
            Self.write(edits[editIndex].edit, to: &out) { received.writeName(index, to: &$0) }
        }
        received.flush(&run, to: &out)
        for index in 0..<additions.count {
            switch additions[index] {
            case .line(let line):
                out.put(spelled: line.text)
            case .unlessSetInPlace(let editIndex):
                guard applied & (1 << editIndex) == 0 else { continue }
                let name = edits[Int(editIndex)].name
                Self.write(edits[Int(editIndex)].edit, to: &out) { $0.put(spelled: name.spelling) }
            }
        }
        out.putCRLF()
    }

    /// The line a set edit writes (`writeName` puts the name down); nothing for a removal.
    private static func write(_ edit: Edit, to out: inout HeadWriter, name writeName: (inout HeadWriter) -> Void) {
        switch edit {
        case .set(let value):
            writeName(&out)
            out.putColonSpace()
            out.putLatin1(value)
        case .setBytes(let value):
            writeName(&out)
            out.putColonSpace()
            out.put(value)
        case .remove:
            return
        }
        out.putCRLF()
    }
}
