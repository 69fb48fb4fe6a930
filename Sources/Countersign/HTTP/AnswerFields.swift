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

    /// Each field, in order.
    func forEach(_ body: (Field) -> Void) {
        if let first { body(first) }
        if let second { body(second) }
    }
}
