/// The two arrays a parsed head's fields are kept in (their bytes, and where each field lies),
/// handed from one parsed head to the next by whoever parses heads one after another (a
/// worker: one request and one response head per exchange). The next head takes them over
/// once the head that had them is gone, with their room kept (the bytes replaced, the slots
/// overwritten): two allocations and two frees per head were some 1,000 instructions of a
/// forwarded request.
///
/// While a head lives its arrays are shared with it, and taking them makes new ones (the
/// arrays are copy-on-write): nothing a live head holds is written under it, and nothing of
/// an earlier head can be read through a later one (only `count` bytes and slots are ever
/// visible, and a head's slots are cut to its own before it is made).
/// Arrays a large head grew are not kept, so what is kept stays small.
public struct HeadArrays {
    private var bytes: [UInt8] = []
    private var slots: [HeaderFields.Slot] = []

    /// The most of each kept: room for an ordinary head (what a worker keeps is two of these).
    private static let keptBytes = 8 * 1024, keptSlots = 64

    public init() {}

    /// The kept slot array for a new head, still holding the slots of the head before: the
    /// parser overwrites them and cuts off the rest (`HeadParser.FieldLines`). Should a live
    /// head still share it, the parser's first change to it makes a copy of its own, as
    /// emptying it made a new array.
    mutating func takeSlots() -> [HeaderFields.Slot] {
        var taken: [HeaderFields.Slot] = []
        swap(&taken, &slots)
        return taken
    }

    /// `source` copied into the kept byte array when no head holds it any more and it has room.
    mutating func takeBytes(copying source: UnsafeRawBufferPointer) -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &bytes)
        guard taken.capacity >= source.count else { return Array(source) }
        // One replacement of the whole array (emptying it first and appending cost twice as much).
        taken.replaceSubrange(taken.startIndex..<taken.endIndex, with: source)
        return taken
    }

    /// Keeps the arrays a head was just given, for the head after it.
    mutating func keep(bytes: [UInt8]) {
        if bytes.capacity <= Self.keptBytes { self.bytes = bytes }
    }

    mutating func keep(slots: [HeaderFields.Slot]) {
        if slots.capacity <= Self.keptSlots { self.slots = slots }
    }
}
