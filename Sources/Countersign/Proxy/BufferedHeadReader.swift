import CEventSSL
import CountersignHTTP

/// `HeadReader` over a libevent input buffer: new bytes are examined where they lie, chunk by
/// chunk, and the buffer is pulled up into one block and parsed only once the reader knows
/// the outcome. Used for every head the proxy reads (client requests, upstream responses,
/// the token endpoint's answers, a parent proxy's answer to CONNECT).
struct BufferedHeadReader {
    private var reader: HeadReader
    /// The buffer the scanned bytes belong to; another one (a new connection) starts over.
    private var buffer: OpaquePointer?

    init(_ kind: HeadReader.Kind) {
        reader = HeadReader(kind)
    }

    mutating func request(from input: OpaquePointer, maxHeadBytes: Int) -> HeadParse<RequestHead> {
        read(input, maxHeadBytes: maxHeadBytes) { HeadParser.parseRequest($0, maxHeadBytes: maxHeadBytes) }
    }

    mutating func response(from input: OpaquePointer, maxHeadBytes: Int) -> HeadParse<ResponseHead> {
        read(input, maxHeadBytes: maxHeadBytes) { HeadParser.parseResponse($0, maxHeadBytes: maxHeadBytes) }
    }

    private mutating func read<Head>(_ input: OpaquePointer, maxHeadBytes: Int,
                                     parse: (UnsafeRawBufferPointer) -> HeadParse<Head>) -> HeadParse<Head> {
        let available = evbuffer_get_length(input)
        // Bytes taken off by someone else would make the remembered position meaningless.
        if buffer != input || available < reader.scanned {
            reader.reset()
            buffer = input
        }
        guard available > reader.scanned else { return .incomplete }
        if reader.scanned == 0 {
            // The first bytes of a head: as one block, to the parser first (see HeadReader.read).
            let count = min(available, maxHeadBytes)
            guard let pointer = evbuffer_pullup(input, count) else { return .incomplete }
            return reader.read(UnsafeRawBufferPointer(start: pointer, count: count), maxHeadBytes: maxHeadBytes, parse: parse)
        }
        guard let window = window(in: input, available: available, maxHeadBytes: maxHeadBytes),
              let pointer = evbuffer_pullup(input, window) else { return .incomplete }
        return parse(UnsafeRawBufferPointer(start: pointer, count: window))
    }

    /// How many bytes decide the head, once known; the reader then starts over for the next
    /// head (the caller drains this one or closes).
    private mutating func window(in input: OpaquePointer, available: Int, maxHeadBytes: Int) -> Int? {
        let vectorCapacity = 8
        return withUnsafeTemporaryAllocation(of: iovec.self, capacity: vectorCapacity) { vectors -> Int? in
            while reader.scanned < available {
                let before = reader.scanned
                var position = evbuffer_ptr()
                guard evbuffer_ptr_set(input, &position, reader.scanned, EVBUFFER_PTR_SET) == 0 else { return nil }
                let filled = Int(evbuffer_peek(input, -1, &position, vectors.baseAddress, Int32(vectorCapacity)))
                guard filled > 0 else { return nil }
                for vector in vectors.prefix(min(filled, vectorCapacity)) where vector.iov_len > 0 {
                    let chunk = UnsafeRawBufferPointer(start: vector.iov_base, count: vector.iov_len)
                    if let window = reader.scan(chunk, maxHeadBytes: maxHeadBytes) {
                        reader.reset()
                        return window
                    }
                }
                guard reader.scanned > before else { return nil }
            }
            return nil
        }
    }
}
