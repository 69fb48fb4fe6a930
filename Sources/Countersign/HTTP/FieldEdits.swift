/// The edits of one `FieldRewrite`, in the order they were made: the first held inline (a
/// request's Host, nearly always its only one; a response has none), the rest in a box made
/// only for a head with more. Eight edits inline were 256 of the rewrite's 384 bytes, copied
/// whole with every move of the head and destroyed one by one with it.
struct FieldEdits {
    typealias Element = (name: FieldName, edit: FieldRewrite.Edit)

    /// Edits after the first (a body-less handshake leg, a collapsed Content-Length, an answer
    /// replacing a received field).
    private final class Rest {
        var list = SmallList<Element>()

        init(_ list: SmallList<Element> = SmallList()) { self.list = list }
    }

    private var first: Element?
    private var rest: Rest?

    var count: Int { first == nil ? 0 : 1 + (rest?.list.count ?? 0) }

    /// Appends and returns the new element's index (eight at most, as `SmallList`).
    @discardableResult
    mutating func append(_ element: Element) -> Int {
        // An edit's index is kept in three bits (`FieldRewrite.editIndices`).
        precondition(count < 8, "a rewrite makes at most eight edits")
        guard first != nil else {
            first = element
            return 0
        }
        return 1 + uniqueRest().list.append(element)
    }

    subscript(index: Int) -> Element {
        get { index == 0 ? first! : rest!.list[index - 1] }
        set {
            if index == 0 { first = newValue } else { uniqueRest().list[index - 1] = newValue }
        }
    }

    /// The box, made or copied so that no other copy of these edits sees a change.
    private mutating func uniqueRest() -> Rest {
        if rest == nil {
            rest = Rest()
        } else if !isKnownUniquelyReferenced(&rest!) {
            rest = Rest(rest!.list)
        }
        return rest!
    }
}
