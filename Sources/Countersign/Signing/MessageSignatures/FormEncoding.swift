/// `application/x-www-form-urlencoded` as RFC 9421 §2.2.8 reads a query for `@query-param`:
/// split on `&`, name and value at the first `=`, `+` and percent-escapes decoded, then both
/// percent-encoded again with the form set, so two spellings of one parameter sign alike.
enum FormEncoding {
    static func pairs(_ query: String) -> [(name: String, value: String)] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(parts[0])
            let value = parts.count > 1 ? decode(parts[1]) : []
            return (reencode(name), reencode(value))
        }
    }

    static func decode(_ text: Substring) -> [UInt8] { PercentEncoding.decode(text, plusIsSpace: true) }

    static func reencode(_ bytes: [UInt8]) -> String { PercentEncoding.string(bytes, keeping: .formSafe) }
}
