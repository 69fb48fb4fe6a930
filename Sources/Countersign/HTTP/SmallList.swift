/// Up to eight elements stored inline (no allocation); more is a programming error, since
/// the number of changes to a head is fixed by the code, not by what a peer sends.
struct SmallList<Element> {
    /// Filled by a closure, not `repeating: nil`: that copied the nil through the generic value
    /// witnesses eight times for every list (four lists per forwarded request).
    private var storage = InlineArray<8, Element?> { _ in nil }
    private(set) var count = 0

    /// Appends and returns the new element's index.
    @discardableResult @inline(__always)
    mutating func append(_ element: Element) -> Int {
        precondition(count < 8, "SmallList holds at most eight elements")
        storage[count] = element
        count += 1
        return count - 1
    }

    @inline(__always)
    subscript(index: Int) -> Element {
        get { storage[index]! }
        set { storage[index] = newValue }
    }

    @inline(__always)
    func firstIndex(where predicate: (Element) -> Bool) -> Int? {
        for index in 0..<count where predicate(storage[index]!) { return index }
        return nil
    }
}
