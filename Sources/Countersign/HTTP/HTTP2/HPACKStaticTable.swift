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

    /// The first index holding `name` and the index holding exactly `field`, for the encoder.
    static let indexByField: [HPACKField: Int] = {
        var map: [HPACKField: Int] = [:]
        for (offset, field) in entries.enumerated() where map[field] == nil { map[field] = offset + 1 }
        return map
    }()

    static let indexByName: [[UInt8]: Int] = {
        var map: [[UInt8]: Int] = [:]
        for (offset, field) in entries.enumerated() where map[field.name] == nil { map[field.name] = offset + 1 }
        return map
    }()
}
