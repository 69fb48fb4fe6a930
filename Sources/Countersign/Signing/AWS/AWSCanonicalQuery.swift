/// The canonical query string: every parameter decoded as sent and encoded the SigV4 way, sorted
/// by encoded name then encoded value (byte order), joined as `name=value` with `&` — `=` even
/// when the value is empty. Decoding first means `%7e`, `~` and `%7E` all sign as `~`, the way
/// the service canonicalizes what it receives.
struct AWSQueryParameter: Equatable {
    /// Both already in canonical encoding.
    var name: String
    var value: String

    init(encodedName: String, encodedValue: String) {
        name = encodedName
        value = encodedValue
    }

    /// From raw (not yet encoded) text, such as the values the signer adds itself.
    init(name: String, value: String) {
        self.name = PercentEncoding.string(name.utf8)
        self.value = PercentEncoding.string(value.utf8)
    }
}

enum AWSCanonicalQuery {
    /// The parameters of a query as sent (without its `?`), canonically encoded, in their order.
    static func parameters(_ query: String?) -> [AWSQueryParameter] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let name: Substring
            let value: Substring
            if let equals = pair.firstIndex(of: "=") {
                name = pair[..<equals]
                value = pair[pair.index(after: equals)...]
            } else {
                name = pair
                value = ""
            }
            return AWSQueryParameter(encodedName: PercentEncoding.string(PercentEncoding.decode(name)),
                                     encodedValue: PercentEncoding.string(PercentEncoding.decode(value)))
        }
    }

    static func canonical(_ parameters: [AWSQueryParameter]) -> String {
        parameters.sorted { lhs, rhs in
            lhs.name == rhs.name ? lhs.value.utf8.lexicographicallyPrecedes(rhs.value.utf8) : lhs.name.utf8.lexicographicallyPrecedes(rhs.name.utf8)
        }.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }
}
