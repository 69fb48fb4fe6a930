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

    /// For the encoder: per name, its first index and each (value, index) it has.
    private static let byName: [[UInt8]: (first: Int, values: [([UInt8], Int)])] = {
        var map: [[UInt8]: (first: Int, values: [([UInt8], Int)])] = [:]
        for (offset, field) in entries.enumerated() {
            map[field.name, default: (offset + 1, [])].values.append((field.value, offset + 1))
        }
        return map
    }()

    /// The index holding exactly `field`, and the first holding its name (one hash of the name).
    static func find(_ field: HPACKField) -> (exact: Int?, name: Int?) {
        guard let entry = byName[field.name] else { return (nil, nil) }
        return (entry.values.first { $0.0 == field.value }?.1, entry.first)
    }
}
