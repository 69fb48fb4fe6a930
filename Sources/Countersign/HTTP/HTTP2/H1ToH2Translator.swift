/// An HTTP/1.1 message, as octets arrive, turned into what an HTTP/2 stream sends: the head as
/// fields (pseudo-header fields first, connection-specific fields dropped, RFC 9113 §8.2.2,
/// §8.3), the body as DATA without its chunked framing, chunked trailers as a trailing HEADERS.
/// A response's interim (1xx) heads go as HEADERS without END_STREAM (RFC 9113 §8.1), except
/// 101, which HTTP/2 does not have (§8.6). Sans-I/O: the caller offers the octets
/// it holds and how many body octets the stream's window takes now; what is not consumed is
/// offered again later.
public struct H1ToH2Translator: Sendable {
    /// Which message: a response (to a request of this method: HEAD has no body), or a
    /// request (its `:scheme`; `:authority` comes from Host).
    public enum Message: Sendable {
        case response(requestMethod: String)
        case request(scheme: String)
    }

    public enum Output: Equatable, Sendable {
        case head([HPACKField], endStream: Bool)
        case data([UInt8], endStream: Bool)
        case trailers([HPACKField])
    }

    enum Phase: Sendable {
        case head
        case fixed(remaining: UInt64)
        case chunked(ChunkedDecoder, trailers: [HPACKField])
        case untilClose
        case done
    }

    let message: Message
    let maxHeadBytes: Int
    var phase: Phase = .head

    public init(_ message: Message, maxHeadBytes: Int) {
        self.message = message
        self.maxHeadBytes = maxHeadBytes
    }

    /// Ready for the next message on the same connection (a request after the last one's end).
    public mutating func nextMessage() {
        phase = .head
    }

    public var isDone: Bool {
        if case .done = phase { return true }
        return false
    }

    /// The head went as fields without passing through here (an exchange's parsed response
    /// handed to its stream): what follows on the HTTP/1.1 side is a body of this framing,
    /// chunked framing included. Returns whether there is none (the head ends the stream).
    public mutating func bodyFollows(_ framing: BodyFraming) -> Bool {
        switch framing {
        case .none, .contentLength(0): phase = .done
        case .contentLength(let length): phase = .fixed(remaining: length)
        case .chunked: phase = .chunked(ChunkedDecoder(), trailers: [])
        case .untilClose: phase = .untilClose
        }
        return isDone
    }

    /// Whether what remains is body octets (the caller may then wait for the window).
    public var awaitsHead: Bool {
        if case .head = phase { return true }
        return false
    }

    /// Translates from the start of `bytes`; returns how many were consumed and what to send.
    /// `allowance` bounds the DATA octets produced (the stream's send window).
    public mutating func translate(_ bytes: UnsafeRawBufferPointer, allowance: Int) throws -> (consumed: Int, outputs: [Output]) {
        var offset = 0
        var allowance = allowance
        var outputs: [Output] = []
        loop: while true {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            switch phase {
            case .done:
                break loop
            case .head:
                guard let (consumed, fields, framing) = try head(rest) else { break loop }
                offset += consumed
                guard let framing else {
                    // An interim head: the final one follows on the same stream.
                    if !fields.isEmpty { outputs.append(.head(fields, endStream: false)) }
                    continue
                }
                switch framing {
                case .none, .contentLength(0):
                    phase = .done
                    outputs.append(.head(fields, endStream: true))
                case .contentLength(let length):
                    phase = .fixed(remaining: length)
                    outputs.append(.head(fields, endStream: false))
                case .chunked:
                    phase = .chunked(ChunkedDecoder(), trailers: [])
                    outputs.append(.head(fields, endStream: false))
                case .untilClose:
                    phase = .untilClose
                    outputs.append(.head(fields, endStream: false))
                }
            case .fixed(let remaining):
                let count = min(Int(clamping: remaining), rest.count, allowance)
                guard count > 0 else { break loop }
                offset += count
                allowance -= count
                let left = remaining - UInt64(count)
                phase = left == 0 ? .done : .fixed(remaining: left)
                outputs.append(.data(Array(rest[..<count]), endStream: left == 0))
            case .untilClose:
                let count = min(rest.count, allowance)
                guard count > 0 else { break loop }
                offset += count
                allowance -= count
                outputs.append(.data(Array(rest[..<count]), endStream: false))
            case .chunked(var decoder, var trailers):
                switch decoder.need {
                case .data(let remaining):
                    let count = min(Int(clamping: remaining), rest.count, allowance)
                    guard count > 0 else { break loop }
                    offset += count
                    allowance -= count
                    decoder.consumedData(UInt64(count))
                    phase = .chunked(decoder, trailers: trailers)
                    outputs.append(.data(Array(rest[..<count]), endStream: false))
                case .line:
                    guard let lineEnd = Self.lineEnd(in: rest) else {
                        guard rest.count <= ChunkedDecoder.maxLineLength + 1 else { throw HTTPParseError(.badChunk, "chunk line too long") }
                        break loop
                    }
                    let event = try decoder.consumeLine(UnsafeRawBufferPointer(rebasing: rest[..<lineEnd]))
                    offset += lineEnd + 2
                    switch event {
                    case .trailer(let field):
                        if let translated = Self.field(field.name, field.value) { trailers.append(translated) }
                        phase = .chunked(decoder, trailers: trailers)
                    case .end:
                        phase = .done
                        outputs.append(trailers.isEmpty ? .data([], endStream: true) : .trailers(trailers))
                    case .chunk, .chunkEnd, .lastChunk:
                        phase = .chunked(decoder, trailers: trailers)
                    }
                case .done:
                    phase = .done
                }
            }
        }
        return (offset, outputs)
    }

    /// The HTTP/1.1 side closed: the end of a body delimited by the close, or a truncated response.
    public mutating func endOfInput() throws -> [Output] {
        switch phase {
        case .untilClose:
            phase = .done
            return [.data([], endStream: true)]
        case .done:
            return []
        case .head, .fixed, .chunked:
            throw HTTPParseError(.badFraming, "the response ended before it was complete")
        }
    }

    /// A complete head at the start of `bytes`: its length, its fields and its body's framing
    /// (nil framing: an interim response, its fields empty when it is not passed on); nil while incomplete.
    private func head(_ bytes: UnsafeRawBufferPointer) throws -> (Int, [HPACKField], BodyFraming?)? {
        switch message {
        case .response(let requestMethod):
            switch HeadParser.parseResponse(bytes, maxHeadBytes: maxHeadBytes) {
            case .incomplete: return nil
            case .invalid(let error): throw error
            case .complete(let head, let consumed):
                let fields = Self.fields([HPACKField(":status", String(head.status))], head.headers)
                guard !head.isInterim else { return (consumed, head.status == 101 ? [] : fields, nil) }
                return (consumed, fields, try BodyFraming.forResponse(head, requestMethod: requestMethod))
            }
        case .request(let scheme):
            switch HeadParser.parseRequest(bytes, maxHeadBytes: maxHeadBytes) {
            case .incomplete: return nil
            case .invalid(let error): throw error
            case .complete(let head, let consumed):
                let pseudo = [HPACKField(":method", head.method), HPACKField(":scheme", scheme),
                              HPACKField(":authority", head.headers["Host"] ?? ""), HPACKField(":path", head.target)]
                var headers = head.headers
                headers.removeAll("Host")
                // TE is hop-by-hop, so the client's never reaches here: the proxy says it takes
                // trailers itself (it carries them on, chunked or as HTTP/2 trailers), which
                // servers such as gRPC's require (§8.2.2 allows "trailers" only).
                return (consumed, Self.fields(pseudo, headers) + [HPACKField("te", "trailers")], try BodyFraming.forRequest(head))
            }
        }
    }

    private static let hopByHop: [[UInt8]] = ["connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade", "te"].map { Array($0.utf8) }

    /// Whether `lower` (a lower-case name) is connection-specific: by length first, since
    /// almost no name has the length of one.
    private static func isHopByHop(_ lower: [UInt8]) -> Bool {
        switch lower.count {
        case 2, 7, 10, 16, 17: return hopByHop.contains(lower)
        default: return false
        }
    }

    /// `pseudo`, then `headers` in lower case without the connection-specific ones. Works on the
    /// head's bytes: a name is lower-cased into its own array, compared, and kept.
    static func fields(_ pseudo: [HPACKField], _ headers: HeaderFields) -> [HPACKField] {
        // Fields the Connection header names are hop-by-hop too (RFC 9110 §7.6.1).
        let named = headers.contains("Connection") ? headers.listElements("Connection").map { lowercased(Array($0.utf8)[...]) } : []
        var fields = pseudo
        fields.reserveCapacity(pseudo.count + headers.count)
        for index in 0..<headers.count {
            let name = lowercased(headers.nameBytes(index))
            guard !isHopByHop(name), named.isEmpty || !named.contains(name) else { continue }
            fields.append(HPACKField(name: name, value: Array(headers.valueBytes(index))))
        }
        return fields
    }

    /// A field with its name in lower case (§8.2.1), or nil for a connection-specific one.
    static func field(_ name: String, _ value: String) -> HPACKField? {
        let lower = lowercased(Array(name.utf8)[...])
        guard !isHopByHop(lower) else { return nil }
        var bytes: [UInt8] = []
        HeaderFields.appendLatin1(value, to: &bytes)
        return HPACKField(name: lower, value: bytes)
    }

    /// ASCII lower case: field names are tokens (RFC 9110 §5.1).
    static func lowercased(_ name: ArraySlice<UInt8>) -> [UInt8] {
        var lower = Array(name)
        lower.withUnsafeMutableBufferPointer { bytes in
            for index in bytes.indices { bytes[index] = ASCIICase.lower(bytes[index]) }
        }
        return lower
    }

    /// Where the first CRLF starts, looking no further than a line may be long.
    private static func lineEnd(in bytes: UnsafeRawBufferPointer) -> Int? {
        let end = min(bytes.count, ChunkedDecoder.maxLineLength + 2)
        guard end >= 2 else { return nil }
        for index in 0..<(end - 1) where bytes[index] == 0x0D && bytes[index + 1] == 0x0A { return index }
        return nil
    }
}
