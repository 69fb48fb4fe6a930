/// RFC 7541 Appendix A: the 61 entries every HPACK context starts with, indexed from 1.
enum HPACKStaticTable {
    static let entries: [HPACKField] = [
        HPACKField(":authority", ""), HPACKField(":method", "GET"), HPACKField(":method", "POST"),
        HPACKField(":path", "/"), HPACKField(":path", "/index.html"), HPACKField(":scheme", "http"),
        HPACKField(":scheme", "https"), HPACKField(":status", "200"), HPACKField(":status", "204"),
        HPACKField(":status", "206"), HPACKField(":status", "304"), HPACKField(":status", "400"),
        HPACKField(":status", "404"), HPACKField(":status", "500"), HPACKField("accept-charset", ""),
        HPACKField("accept-encoding", "gzip, deflate"), HPACKField("accept-language", ""),
        HPACKField("accept-ranges", ""), HPACKField("accept", ""), HPACKField("access-control-allow-origin", ""),
        HPACKField("age", ""), HPACKField("allow", ""), HPACKField("authorization", ""),
        HPACKField("cache-control", ""), HPACKField("content-disposition", ""), HPACKField("content-encoding", ""),
        HPACKField("content-language", ""), HPACKField("content-length", ""), HPACKField("content-location", ""),
        HPACKField("content-range", ""), HPACKField("content-type", ""), HPACKField("cookie", ""),
        HPACKField("date", ""), HPACKField("etag", ""), HPACKField("expect", ""), HPACKField("expires", ""),
        HPACKField("from", ""), HPACKField("host", ""), HPACKField("if-match", ""),
        HPACKField("if-modified-since", ""), HPACKField("if-none-match", ""), HPACKField("if-range", ""),
        HPACKField("if-unmodified-since", ""), HPACKField("last-modified", ""), HPACKField("link", ""),
        HPACKField("location", ""), HPACKField("max-forwards", ""), HPACKField("proxy-authenticate", ""),
        HPACKField("proxy-authorization", ""), HPACKField("range", ""), HPACKField("referer", ""),
        HPACKField("refresh", ""), HPACKField("retry-after", ""), HPACKField("server", ""),
        HPACKField("set-cookie", ""), HPACKField("strict-transport-security", ""),
        HPACKField("transfer-encoding", ""), HPACKField("user-agent", ""), HPACKField("vary", ""),
        HPACKField("via", ""), HPACKField("www-authenticate", ""),
    ]

    static var count: Int { entries.count }

    /// For the encoder: the entries of each name length, at the first entry of each name (a
    /// name's entries are consecutive). Found by comparing a few names of the right length;
    /// hashing the name, as a dictionary keyed by it did, cost more than the whole search.
    private static let firstOfNameByLength: [[Range<Int>]] = {
        var lists = [[Range<Int>]](repeating: [], count: 28)
        var first = 0
        for offset in 1...entries.count where offset == entries.count || entries[offset].name != entries[first].name {
            lists[entries[first].name.count].append(first..<offset)
            first = offset
        }
        return lists
    }()

    /// The table's value for a `:status` it holds (200, 204, 206, 304, 400, 404, 500).
    static func sharedStatus(_ status: Int) -> [UInt8]? {
        for offset in 7...13 where entries[offset].value.count == 3 && statusCode(entries[offset].value) == status {
            return entries[offset].value
        }
        return nil
    }

    private static func statusCode(_ digits: [UInt8]) -> Int {
        digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// Whether entry `index` is exactly `name` (lower-cased when `lowering`) and `value`.
    static func holds(_ index: Int, name: UnsafeBufferPointer<UInt8>, lowering: Bool, value: UnsafeBufferPointer<UInt8>) -> Bool {
        entries.withUnsafeBufferPointer { table in
            index >= 1 && index <= table.count && HPACKBytes.holds(table[index - 1], name: name, lowering: lowering, value: value)
        }
    }

    /// The index holding exactly `name` (lower-cased when `lowering`) and `value`, and the
    /// first holding its name.
    static func find(name: UnsafeBufferPointer<UInt8>, lowering: Bool, value: UnsafeBufferPointer<UInt8>) -> (exact: Int?, name: Int?) {
        let length = name.count
        guard length < firstOfNameByLength.count else { return (nil, nil) }
        return entries.withUnsafeBufferPointer { table in
            for run in firstOfNameByLength[length] where table[run.lowerBound].name.withUnsafeBufferPointer({ HPACKBytes.equalName(name, lowering: lowering, $0) }) {
                for offset in run where table[offset].value.withUnsafeBufferPointer({ HPACKBytes.equal($0, value) }) {
                    return (offset + 1, run.lowerBound + 1)
                }
                return (nil, run.lowerBound + 1)
            }
            return (nil, nil)
        }
    }
}
