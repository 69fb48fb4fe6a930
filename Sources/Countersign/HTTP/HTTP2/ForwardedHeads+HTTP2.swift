/// The heads a forwarding proxy writes, for a client on an HTTP/2 stream (kept apart from
/// ForwardedHeads.swift: the HTTP/1.1 fuzz targets build the HTTP directory without HTTP2).
extension ForwardedHeads {
    /// A response head as the fields of an HTTP/2 HEADERS frame, for a client on an HTTP/2
    /// stream (`H2ResponseFields`). Built from the parsed head: it is never written as
    /// HTTP/1.1 only to be parsed back.
    public static func h2Fields(_ response: ResponseHead, via received: HTTPVersion?) -> H2ResponseFields {
        H2ResponseFields(response, via: received)
    }
}

/// A response head's fields as HTTP/2 carries them, read in place by the encoder: the rewrite
/// `ForwardedHeads.response` and `interim` make (hop-by-hop fields out, one Content-Length),
/// less the fields HTTP/2 has no use for (framing and connection fields, RFC 9113 §8.2.2).
/// `via` is appended to a final head (nil for a `1xx`, which gets none over HTTP/1.1 either).
/// Names go as the head spells them; the encoder sends them in lower case. Nothing is copied:
/// a list of arrays per field was most of the cost of sending a head.
public struct H2ResponseFields: HPACKHeaderList {
    private let response: ResponseHead
    private let via: [UInt8]?

    public init(_ response: ResponseHead, via received: HTTPVersion?) {
        self.response = response
        via = received.map(Self.viaValue)
    }

    public var namesInAnyCase: Bool { true }

    public func forEachField(_ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) -> Void) {
        Self.statusValue(response.status).withUnsafeBufferPointer { value in Self.statusName.withUnsafeBufferPointer { body($0, value) } }
        // One pass over the stored fields: nothing is copied first (a strip copied the whole
        // section whenever the upstream sent `Connection`, as nginx does with every response).
        let headers = response.headers
        let filter = HopByHop.Filter(headers, keepUpgrade: false)
        let collapsedLength = HopByHop.collapsedContentLength(headers)
        var lengthWritten = false
        headers.forEachFieldBytes { index, name, value in
            guard !filter.drops(index, in: headers) else { return }
            switch headers.knownName(index) {
            case .transferEncoding:
                return
            case .contentLength where collapsedLength != nil:
                // Written once, with the one value its repeats agreed on.
                guard !lengthWritten, var collapsedLength else { return }
                lengthWritten = true
                collapsedLength.withUTF8 { body(name, $0) }
            default:
                body(name, value)
            }
        }
        if let via { via.withUnsafeBufferPointer { value in Self.viaName.withUnsafeBufferPointer { body($0, value) } } }
    }

    private static let statusName = Array(":status".utf8), viaName = Array("via".utf8)
    private static let viaValues = (http11: Array(ForwardedHeads.via(.http11).description.utf8),
                                    http2: Array(ForwardedHeads.via(.http2).description.utf8))

    /// Shared arrays for the usual values: a field's arrays were allocated and freed per response.
    private static func statusValue(_ status: Int) -> [UInt8] {
        if let shared = HPACKStaticTable.sharedStatus(status) { return shared }
        var out: [UInt8] = []
        out.appendHead(bound: 20) { HeadSerializer.writeStatus(status, to: &$0) }
        return out
    }

    private static func viaValue(_ received: HTTPVersion) -> [UInt8] {
        switch received {
        case .http11: return viaValues.http11
        case .http2: return viaValues.http2
        default: return Array(ForwardedHeads.via(received).description.utf8)
        }
    }
}
