/// One value per challenge an exchange can meet, by its status: the origin's 401 and the
/// parent proxy's 407. Two slots instead of a dictionary: an exchange with auth rules looks its
/// authenticators and answers up several times per request, and a dictionary hashed and
/// allocated for each.
struct ByChallenge<Value>: Sequence {
    private var origin: Value?
    private var parent: Value?

    init() {}

    subscript(status: Int) -> Value? {
        get {
            switch status {
            case 401: return origin
            case 407: return parent
            default: return nil
            }
        }
        set {
            switch status {
            case 401: origin = newValue
            case 407: parent = newValue
            default: preconditionFailure("no challenge is answered for status \(status)")
            }
        }
    }

    var isEmpty: Bool { origin == nil && parent == nil }
    var count: Int { (origin == nil ? 0 : 1) + (parent == nil ? 0 : 1) }
    /// Whether a value present satisfies `predicate`, the origin's tried first. These helpers
    /// reach the two slots directly: going through the sequence copies the pair (and both values)
    /// through generic witnesses.
    func containsValue(where predicate: (Value) -> Bool) -> Bool {
        if let origin, predicate(origin) { return true }
        if let parent, predicate(parent) { return true }
        return false
    }

    /// The first non-nil `transform` of a value present, the origin's tried first.
    func firstValue<Result>(_ transform: (Value) -> Result?) -> Result? {
        if let origin, let result = transform(origin) { return result }
        if let parent, let result = transform(parent) { return result }
        return nil
    }

    /// The values present, the origin's first.
    func makeIterator() -> Iterator { Iterator(slots: self) }

    struct Iterator: IteratorProtocol {
        fileprivate let slots: ByChallenge
        private var slot = 0

        fileprivate init(slots: ByChallenge) { self.slots = slots }

        mutating func next() -> (status: Int, value: Value)? {
            while slot < 2 {
                defer { slot += 1 }
                if slot == 0, let origin = slots.origin { return (401, origin) }
                if slot == 1, let parent = slots.parent { return (407, parent) }
            }
            return nil
        }
    }
}
