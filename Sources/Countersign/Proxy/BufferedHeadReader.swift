import CountersignHTTP

/// `HeadReader` over a libevent input buffer: new bytes are examined where they lie, chunk by
/// chunk, and the buffer is pulled up into one block and parsed only once the reader knows
/// the outcome. Used for every head the proxy reads (client requests, upstream responses,
/// the token endpoint's answers, a parent proxy's answer to CONNECT).
struct BufferedHeadReader {
    private var reader: HeadReader
    /// The buffer the scanned bytes belong to; another one (a new connection) starts over.
    private var buffer: EventBuffer?

    init(_ kind: HeadReader.Kind) {
        reader = HeadReader(kind)
    }

    /// `arrays`: where the fields of the heads parsed one after another are kept (`HeadArrays`).
    mutating func request(from input: EventBuffer, maxHeadBytes: Int, arrays: inout HeadArrays) -> HeadParse<RequestHead> {
        read(input, maxHeadBytes: maxHeadBytes) { HeadParser.parseRequest($0, maxHeadBytes: maxHeadBytes, arrays: &arrays) }
    }

    mutating func response(from input: EventBuffer, maxHeadBytes: Int, arrays: inout HeadArrays) -> HeadParse<ResponseHead> {
        read(input, maxHeadBytes: maxHeadBytes) { HeadParser.parseResponse($0, maxHeadBytes: maxHeadBytes, arrays: &arrays) }
    }

    private mutating func read<Head>(_ input: EventBuffer, maxHeadBytes: Int,
                                     parse: (UnsafeRawBufferPointer) -> HeadParse<Head>) -> HeadParse<Head> {
        let available = input.count
        // Bytes taken off by someone else would make the remembered position meaningless.
        if buffer != input || available < reader.scanned {
            reader.reset()
            buffer = input
        }
        guard available > reader.scanned else { return .incomplete }
        if reader.scanned == 0 {
            // The first bytes of a head: as one block, to the parser first (see HeadReader.read).
            let count = min(available, maxHeadBytes)
            guard let bytes = input.pullUp(count) else { return .incomplete }
            return reader.read(bytes, maxHeadBytes: maxHeadBytes, parse: parse)
        }
        guard let window = window(in: input, maxHeadBytes: maxHeadBytes),
              let bytes = input.pullUp(window) else { return .incomplete }
        return parse(bytes)
    }

    /// How many bytes decide the head, once known; the reader then starts over for the next
    /// head (the caller drains this one or closes).
    private mutating func window(in input: EventBuffer, maxHeadBytes: Int) -> Int? {
        var window: Int?
        input.forEachSegment(from: reader.scanned) { segment in
            window = reader.scan(segment, maxHeadBytes: maxHeadBytes)
            return window != nil
        }
        if window != nil { reader.reset() }
        return window
    }
}
