/// Objects of connections and streams that ended, kept for new ones (at most `limit`): a
/// worker opens and closes them in bursts, and each was made and freed. The giver makes an
/// object as new before giving it back.
final class SparePool<Item: AnyObject> {
    private var spare: [Item] = []
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    func take() -> Item? { spare.popLast() }

    /// Kept while there is room; otherwise let go.
    func giveBack(_ item: Item) {
        if spare.count < limit { spare.append(item) }
    }
}
