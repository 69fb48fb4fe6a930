extension HeadParser {
    /// The field lines of a head, each checked and located by the scan that finds where it
    /// ends. A fault in one is kept and reported only once the head is known to be whole and
    /// its start line sound, so the error a head gets does not depend on how its bytes arrived.
    struct FieldLines {
        /// Where the bytes copied for the head begin: the fields' first byte, or (`origin`)
        /// a request's target, copied with them so that it needs no String of its own.
        private var base = 0
        private let origin: Int?
        /// Where the fields begin.
        private var first = 0
        private var end = 0
        /// The slots of the head before when given (`HeadArrays.takeSlots`), overwritten one by
        /// one and cut to `count` once the head is whole: emptied first, they cost a
        /// `replaceSubrange` per head (some 85 instructions), now paid only by a head with fewer
        /// fields than the one before. Given back after the parse.
        private var slots: [HeaderFields.Slot]
        /// How many of `slots` are this head's.
        private var count = 0
        private var present = FieldNames()
        private var fault: HTTPParseError?

        /// `origin`: where a request's target begins, when it is known before the fields are scanned.
        init(slots: [HeaderFields.Slot], origin: Int? = nil) {
            self.slots = slots
            self.origin = origin
        }

        /// The slot array, moved out for `HeadArrays` to keep once the parse is done (read as
        /// `slots`, it was copied, and the copy released with these lines: twice per request).
        mutating func takeSlots() -> [HeaderFields.Slot] {
            var taken: [HeaderFields.Slot] = []
            swap(&taken, &slots)
            return taken
        }

        /// The field lines start at `offset` (after the start line's CRLF).
        mutating func begin(at offset: Int) {
            base = origin ?? offset
            first = offset
            end = offset
            // Room for most heads' fields, unless the array given has it already. (Array(unsafeUninitializedCapacity:)
            // cost three times as much: it looked up the generic metadata of the array on every call.)
            slots.reserveCapacity(16)
        }

        /// The blank line is at `offset`: the field lines end there, their last CRLF left out.
        mutating func end(at offset: Int) { end = max(base, offset - 2) }

        /// Scans the field line that starts at `start` (a byte that is not CR or LF) to its
        /// first CR or LF, or to `limit`, and returns where that is. After a fault, lines are
        /// only searched for their end.
        @inline(__always) mutating func scanLine(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> Int {
            guard fault == nil else { return ByteScan.firstLineBreak(bytes, from: start, limit: limit) }
            switch HeadParser.scanField(bytes, from: start, limit: limit) {
            case .located(let name, let value, let lineEnd):
                let known = FieldName(UnsafeRawBufferPointer(rebasing: bytes[name]).assumingMemoryBound(to: UInt8.self))
                // Offsets into the head: never negative, never near overflowing, and each pair
                // already in order (the ranges found), so not checked again.
                let slot = HeaderFields.Slot(name: Range(uncheckedBounds: (name.lowerBound &- base, name.upperBound &- base)),
                                             value: Range(uncheckedBounds: (value.lowerBound &- base, value.upperBound &- base)),
                                             known: known)
                if count < slots.count { slots[count] = slot } else { slots.append(slot) }
                count += 1
                present.insert(known)
                return lineEnd
            case .faulty(let error, let resumeAt):
                fault = error
                return ByteScan.firstLineBreak(bytes, from: resumeAt, limit: limit)
            }
        }

        /// The fields, copied once into the buffer they are ranges of (the one `arrays` kept,
        /// when it can be), which `arrays` keeps for the next head; the first fault instead.
        mutating func headers(_ bytes: UnsafeRawBufferPointer, arrays: inout HeadArrays) throws(HTTPParseError) -> HeaderFields {
            if let fault { throw fault }
            guard count > 0 else { return HeaderFields() }
            // The slots the head before left past this head's own.
            if slots.count > count { slots.removeSubrange(count...) }
            let storage = arrays.takeBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[base..<end]))
            arrays.keep(bytes: storage)
            return HeaderFields(bytes: storage, slots: slots, present: present, fieldsStart: first - base)
        }

        /// A request's fields and its `target`: the target's bytes in the fields' copy when
        /// they were copied from it (`origin`), else as text.
        @inline(__always) mutating func requestHeaders(_ bytes: UnsafeRawBufferPointer, target: Range<Int>,
                            arrays: inout HeadArrays) throws(HTTPParseError) -> (HeaderFields, RequestTargetText) {
            let headers = try self.headers(bytes, arrays: &arrays)
            guard origin == target.lowerBound, count > 0 else {
                return (headers, RequestTargetText(HeadParser.ascii(bytes, target)))
            }
            return (headers, RequestTargetText(received: headers.storageBytes, 0..<target.count))
        }
    }

    enum FieldScan {
        /// A sound field, and where its line ends (the first CR or LF after it, or the limit).
        case located(name: Range<Int>, value: Range<Int>, lineEnd: Int)
        /// The first fault in the line; the line's end is still to be found from `resumeAt`.
        case faulty(HTTPParseError, resumeAt: Int)
    }

    /// One walk over the field line that starts at `start` (a byte that is not CR or LF): the
    /// name, the colon, the value to the first CR or LF (or `limit`), every byte checked.
    @inline(__always) static func scanField(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> FieldScan {
        if let folded = foldingFault(bytes[start]) { return .faulty(folded, resumeAt: start + 1) }
        var colon = ByteScan.endOfPlainName(bytes, from: start, limit: limit)
        // Usually the name's letters end at its colon, and the name is sound; else every check.
        if colon == start || colon == limit || bytes[colon] != COLON {
            colon = endOfToken(bytes, from: colon, limit: limit)
            // A name cut short by CR or LF is a line without a colon.
            let nameLineEnd = colon < limit && (bytes[colon] == CR || bytes[colon] == LF) ? colon : limit
            if let error = nameFault(bytes, start: start, end: colon, lineEnd: nameLineEnd) {
                return .faulty(error, resumeAt: colon)
            }
        }
        let valueStart = skipWhitespace(bytes, from: colon + 1, limit: limit)
        let lineEnd = ByteScan.endOfFieldValue(bytes, from: valueStart, limit: limit)
        if lineEnd < limit, bytes[lineEnd] != CR, bytes[lineEnd] != LF {
            return .faulty(valueFault, resumeAt: lineEnd + 1)
        }
        return .located(name: start..<colon, value: valueStart..<trimWhitespace(bytes, valueStart, lineEnd), lineEnd: lineEnd)
    }

    static func parseField(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) throws -> HeaderField {
        let (name, value) = try locateField(bytes, line)
        return HeaderField(ascii(bytes, name), latin1(bytes, value))
    }

    /// Where the name and the value (without surrounding OWS) of one field line lie, after
    /// checking every byte of it: a line already cut out (a trailer), in which CR and LF are
    /// bytes like any other a field may not hold.
    static func locateField(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) throws(HTTPParseError) -> (name: Range<Int>, value: Range<Int>) {
        if let folded = foldingFault(bytes[line.lowerBound]) { throw folded }
        let colon = endOfName(bytes, from: line.lowerBound, limit: line.upperBound)
        if let error = nameFault(bytes, start: line.lowerBound, end: colon, lineEnd: line.upperBound) { throw error }
        let valueStart = skipWhitespace(bytes, from: colon + 1, limit: line.upperBound)
        let valueEnd = trimWhitespace(bytes, valueStart, line.upperBound)
        guard ByteScan.allFieldValueBytes(bytes, valueStart..<valueEnd) else { throw valueFault }
        return (line.lowerBound..<colon, valueStart..<valueEnd)
    }

    // MARK: - Parts of a field line

    @inline(__always) private static func foldingFault(_ first: UInt8) -> HTTPParseError? {
        guard first == SP || first == HTAB else { return nil }
        return HTTPParseError(.obsoleteLineFolding, "obsolete line folding is not accepted")
    }

    /// The first byte from `start` that is not a token character, or `limit`: letters and
    /// `-` a word at a time, the other token characters one by one.
    @inline(__always) private static func endOfName(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> Int {
        endOfToken(bytes, from: ByteScan.endOfPlainName(bytes, from: start, limit: limit), limit: limit)
    }

    /// The first byte from `start` that is not a token character, or `limit`, one by one.
    @inline(__always) private static func endOfToken(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> Int {
        var index = start
        while index < limit, CharacterClass.isTokenChar(bytes[index]) { index += 1 }
        return index
    }

    /// What is wrong with a name from `start` that ends at `end` (its first byte that is not a
    /// token character) in a line that ends at `lineEnd`, if anything: it must end at a colon.
    @inline(__always) private static func nameFault(_ bytes: UnsafeRawBufferPointer, start: Int, end: Int, lineEnd: Int) -> HTTPParseError? {
        if end < lineEnd, bytes[end] != COLON {
            if bytes[end] == SP || bytes[end] == HTAB {
                return HTTPParseError(.whitespaceBeforeColon, "whitespace between field name and colon")
            }
            return HTTPParseError(.badFieldName, "invalid character in a field name")
        }
        guard end < lineEnd, end > start else {
            return HTTPParseError(.badFieldName, end == start ? "empty field name" : "field line without a colon")
        }
        return nil
    }

    private static var valueFault: HTTPParseError {
        HTTPParseError(.badFieldValue, "invalid character in the value of a field")
    }

    /// Past the SP and HTAB from `start`.
    @inline(__always) private static func skipWhitespace(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> Int {
        var index = start
        while index < limit, bytes[index] == SP || bytes[index] == HTAB { index += 1 }
        return index
    }

    /// `end` moved back over the SP and HTAB that precede it, not past `start`.
    @inline(__always) private static func trimWhitespace(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Int {
        var index = end
        while index > start, bytes[index - 1] == SP || bytes[index - 1] == HTAB { index -= 1 }
        return index
    }
}
