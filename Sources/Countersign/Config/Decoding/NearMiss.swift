/// Suggests the key a user probably meant, so `listn` points at `listen` and
/// `anchorsOnly` at `anchors_only`.
public enum NearMiss {
    public static func suggestion(for key: String, among candidates: [String]) -> String? {
        let folded = fold(key)
        if let sameLetters = candidates.first(where: { fold($0) == folded }) { return sameLetters }
        // "warning" for "warn", "anchor" for "anchors": a complete word with more or less on the end.
        if let stem = candidates.first(where: { min($0.count, folded.count) >= 3 && (folded.hasPrefix(fold($0)) || fold($0).hasPrefix(folded)) }) {
            return stem
        }
        let lowered = Array(key.lowercased().unicodeScalars)
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(lowered, Array(candidate.unicodeScalars))
            if distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        guard let best else { return nil }
        // Allow roughly one typo per three letters, at least one, at most three.
        let tolerance = min(3, max(1, key.count / 3))
        return best.distance <= tolerance ? best.name : nil
    }

    /// Case, `-` and `_` differences are spelling conventions, not typos.
    private static func fold(_ key: String) -> String {
        String(key.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" })
    }

    /// Levenshtein distance with one rolling row.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var diagonal = row[0]
            row[0] = i
            for j in 1...b.count {
                let above = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
}
