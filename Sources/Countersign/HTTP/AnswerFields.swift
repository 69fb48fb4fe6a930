/// The auth fields one attempt of a request carries: at most the origin's answer and the
/// parent proxy's, held in two slots. The proxy writes one with every answered request, and an
/// array of them was an allocation and a free per request (~500 instructions).
public struct AnswerFields {
    public typealias Field = (name: FieldName, value: [UInt8])

    private var first: Field?
    private var second: Field?

    public init() {}

    /// `origin`'s field goes before `parent`'s, as they are given.
    public init(_ origin: Field?, _ parent: Field?) {
        first = origin ?? parent
        second = origin == nil ? nil : parent
    }

    var count: Int { first == nil ? 0 : second == nil ? 1 : 2 }

    /// Whether a field is called `name`.
    func contains(_ name: FieldName) -> Bool { first?.name == name || second?.name == name }

    /// Adds `field` after the others (two at most) and returns its slot.
    mutating func append(_ field: Field) -> Int {
        precondition(second == nil, "a request carries at most two answers")
        if first == nil {
            first = field
            return 0
        }
        second = field
        return 1
    }

    /// Each field, in order.
    func forEach(_ body: (Field) -> Void) {
        if let first { body(first) }
        if let second { body(second) }
    }

    /// Writes the line of the field in `slot`, CRLF included.
    func writeLine(_ slot: Int, to out: inout HeadWriter) {
        guard let field = slot == 0 ? first : second else { return }
        out.put(spelled: field.name.spelling)
        out.putColonSpace()
        out.put(field.value)
        out.putCRLF()
    }
}
