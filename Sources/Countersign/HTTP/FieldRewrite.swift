/// The changes a proxy makes to a received field section, written out in one pass over its
/// stored bytes: hop-by-hop fields left out, a few fields given a new value where they first
/// stood (their repeats dropped) or removed, new fields appended after the received ones.
/// No copy of the section is made: the lines go straight into the writer's memory, whose size
/// `byteBound` gives beforehand.
///
/// The edits apply to the received fields only; appended fields are written as given.
struct FieldRewrite {
    enum Edit {
        case set(String)
        /// A value already in wire bytes (an auth answer: no String is made of a secret).
        case setBytes([UInt8])
        case remove

        var isRemoval: Bool { if case .remove = self { true } else { false } }

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
        /// The field of `answers` in this slot.
        case answer(slot: UInt8)
    }

    private let received: HeaderFields
    private let filter: HopByHop.Filter
    /// Not arrays: a forwarded head makes at most a handful of changes, and two arrays per
    /// head were two allocations per message.
    private var edits = FieldEdits()
    /// The names a received field is looked at for: those `edits` hold, and the hop-by-hop
    /// ones when the filter drops any. Any other field (most) joins the run of copied lines.
    private var attended = FieldNames()
    /// The names `edits` hold, and where: the index of the edit for a name at three bits per
    /// `FieldName.rawValue` (eight edits at most, seventeen names), so a received field finds
    /// its edit without a walk of the list.
    private var edited = FieldNames()
    private var editIndices: UInt64 = 0
    private var additions = SmallList<Addition>()
    /// Auth answers whose name no received field has nor any edit: one more line each, held
    /// apart from `edits` (an edit carrying the bytes was copied, retained and released a few
    /// times on its way, ~250 instructions per answered request).
    /// nil until one is: a response head, or a request without any, destroys nothing of it.
    private var answers: AnswerFields?
    /// The most the field lines and the blank line take: the received lines as the writer
    /// gives them, plus every edit's and addition's own line.
    private(set) var byteBound: Int

    @inline(__always)
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

    mutating func setOrAppend(_ name: FieldName, bytes value: [UInt8]) {
        // The usual answer: nothing received or edited has its name, so it is appended as it is.
        guard !received.contains(name), !edited.contains(name), answers?.contains(name) != true, answers?.count ?? 0 < 2 else {
            return setOrAppend(name, edit: .setBytes(value))
        }
        if answers == nil { answers = AnswerFields() }
        additions.append(.answer(slot: UInt8(answers!.append((name, value)))))
        byteBound += name.spelling.utf8CodeUnitCount + value.count + 4
    }

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
        precondition(answers?.contains(name) != true, "a field appended as an answer is not edited after it")
        byteBound += edit.byteBound(name)
        if let index = editIndex(for: name) {
            edits[index].edit = edit
            return index
        }
        attended.insert(name)
        edited.insert(name)
        let index = edits.append((name, edit))
        editIndices |= UInt64(index) << (UInt64(name.rawValue) &* 3)
        return index
    }

    /// The edit for received field `index`, if one is for its name.
    private func editIndex(for known: FieldName) -> Int? {
        guard edited.contains(known) else { return nil }
        return Int(truncatingIfNeeded: (editIndices >> (UInt64(known.rawValue) &* 3)) & 7)
    }

    /// Writes every field line and the blank line that ends the head.
    func write(to out: inout HeadWriter) {
        var applied: UInt8 = 0  // one bit per edit
        received.writeLines(to: &out, attending: attended, attendAll: filter.nominatesFields, context: self) { rewrite, index, known, out in
            if rewrite.filter.drops(index, in: rewrite.received) { return .replaced }
            guard let editIndex = rewrite.editIndex(for: known) else { return .kept }
            let bit: UInt8 = 1 << editIndex
            if applied & bit != 0 { return .replaced }  // a repeat of a field already set or removed
            applied |= bit
            let edit = rewrite.edits[editIndex].edit
            guard !edit.isRemoval else { return .replaced }
            rewrite.received.writeName(index, to: &out)
            Self.writeValue(of: edit, to: &out)
            return .replaced
        }
        for index in 0..<additions.count {
            switch additions[index] {
            case .line(let line):
                out.put(spelled: line.text)
            case .unlessSetInPlace(let editIndex):
                guard applied & (1 << editIndex) == 0 else { continue }
                let edit = edits[Int(editIndex)]
                guard !edit.edit.isRemoval else { continue }
                out.put(spelled: edit.name.spelling)
                Self.writeValue(of: edit.edit, to: &out)
            case .answer(let slot):
                answers?.writeLine(Int(slot), to: &out)
            }
        }
        out.putCRLF()
    }

    /// What follows the name in the line a set edit writes (a removal writes no line).
    private static func writeValue(of edit: Edit, to out: inout HeadWriter) {
        switch edit {
        case .set(let value):
            out.putColonSpace()
            out.putLatin1(value)
        case .setBytes(let value):
            out.putColonSpace()
            out.put(value)
        case .remove:
            return
        }
        out.putCRLF()
    }
}
