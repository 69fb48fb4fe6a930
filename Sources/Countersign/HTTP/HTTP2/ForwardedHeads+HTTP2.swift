/// The heads a forwarding proxy writes, for a client on an HTTP/2 stream (kept apart from
/// ForwardedHeads.swift: the HTTP/1.1 fuzz targets build the HTTP directory without HTTP2).
extension ForwardedHeads {
    /// A response head as the fields of an HTTP/2 HEADERS frame, for a client on an HTTP/2
    /// stream: the rewrite `response` and `interim` make (hop-by-hop fields out, one
    /// Content-Length), less the fields HTTP/2 has no use for (framing and connection fields,
    /// RFC 9113 §8.2.2), names in lower case. `via` is appended to a final head (nil for a `1xx`,
    /// which gets none over HTTP/1.1 either). Built from the parsed head: it is never written
    /// as HTTP/1.1 only to be parsed back.
    public static func h2Fields(_ response: ResponseHead, via received: HTTPVersion?) -> [HPACKField] {
        // One pass over the stored fields: nothing is copied first (a strip copied the whole
        // section whenever the upstream sent `Connection`, as nginx does with every response).
        let headers = response.headers
        let filter = HopByHop.Filter(headers, keepUpgrade: false)
        let collapsedLength = HopByHop.collapsedContentLength(headers)
        var lengthWritten = false
        var fields: [HPACKField] = []
        fields.reserveCapacity(headers.count + 2)
        fields.append(HPACKField(name: statusField, value: statusValue(response.status)))
        for index in 0..<headers.count where !filter.drops(index) {
            let bytes = headers.nameBytes(index)
            let name = HPACKStaticTable.sharedName(lowercasing: bytes) ?? H1ToH2Translator.lowercased(bytes)
            switch name.count {
            case 17 where name == transferEncoding:
                continue
            case 14 where name == contentLength && collapsedLength != nil:
                // Written once, with the one value its repeats agreed on.
                guard !lengthWritten, let collapsedLength else { continue }
                lengthWritten = true
                fields.append(HPACKField(name: name, value: Array(collapsedLength.utf8)))
            default:
                fields.append(HPACKField(name: name, value: Array(headers.valueBytes(index))))
            }
        }
        if let received { fields.append(HPACKField(name: viaName, value: viaValue(received))) }
        return fields
    }

    private static let statusField = Array(":status".utf8), viaName = Array("via".utf8)
    private static let transferEncoding = Array("transfer-encoding".utf8), contentLength = Array("content-length".utf8)
    private static let viaValues = (http11: Array(via(.http11).description.utf8), http2: Array(via(.http2).description.utf8))

    /// Shared arrays for the usual values: a field's arrays are allocated and freed per response.
    private static func statusValue(_ status: Int) -> [UInt8] {
        if let shared = HPACKStaticTable.sharedStatus(status) { return shared }
        var out: [UInt8] = []
        HeadSerializer.appendStatus(status, to: &out)
        return out
    }

    private static func viaValue(_ received: HTTPVersion) -> [UInt8] {
        switch received {
        case .http11: return viaValues.http11
        case .http2: return viaValues.http2
        default: return Array(via(received).description.utf8)
        }
    }
}
