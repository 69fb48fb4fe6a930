/// Finds where a message head ends in bytes that arrive a few at a time, without
/// rescanning what it has already seen: a head trickled in byte by byte costs linear
/// work. It only follows the line structure (CRLF, the blank line, bare CR / bare LF,
/// the limit); once it knows how many bytes settle the outcome, `HeadParser` is run once
/// over exactly those bytes and gives the head or the precise error, so the reader can
/// never be more lenient than the parser.
public struct HeadReader: Sendable {
    public enum Kind: Sendable {
        /// Empty lines before the request line are skipped (RFC 9112 §2.2).
        case request
        /// An empty first line is an error the parser reports.
        case response
    }

    public let kind: Kind
    /// Bytes of the current head examined so far; the next chunk starts here.
    public private(set) var scanned = 0
    /// Every byte ever examined by this reader (for tests that check the work is linear).
    public private(set) var totalScanned = 0
    private var previousWasCR = false
    private var lineStart = 0
    private var sawStartLine = false

    public init(_ kind: Kind) {
        self.kind = kind
    }

    /// Forgets the current head: call once a head has been taken off the buffer.
    public mutating func reset() {
        scanned = 0
        previousWasCR = false
        lineStart = 0
        sawStartLine = false
    }

    /// Examines `chunk`, the buffered bytes that follow the first `scanned` ones. Returns how
    /// many bytes from the start of the head the parser must see to decide (the head with its
    /// blank line, or up to the first malformed byte, or `maxHeadBytes` when no head ends
    /// within the limit), or nil when more bytes are needed.
    public mutating func scan(_ chunk: UnsafeRawBufferPointer, maxHeadBytes: Int) -> Int? {
        let room = maxHeadBytes - scanned
        guard room > 0 else { return maxHeadBytes }
        let count = min(chunk.count, room)
        var index = 0
        while index < count {
            if previousWasCR {
                let position = scanned + index
                previousWasCR = false
                guard chunk[index] == LF else { return consume(index + 1) }  // bare CR
                if position - 1 == lineStart {
                    if sawStartLine { return consume(index + 1) }      // the blank line
                    if kind == .response { return consume(index + 1) } // empty status line
                } else {
                    sawStartLine = true
                }
                lineStart = position + 1
                index += 1
                continue
            }
            // The bytes between line breaks are the parser's to check: passed a word at a time.
            index = ByteScan.firstLineBreak(chunk, from: index, limit: count)
            guard index < count else { break }
            if chunk[index] == LF { return consume(index + 1) }  // bare LF
            previousWasCR = true
            index += 1
        }
        _ = consume(count)
        return scanned >= maxHeadBytes ? maxHeadBytes : nil
    }

    private mutating func consume(_ count: Int) -> Int {
        scanned += count
        totalScanned += count
        return scanned
    }
}

extension HeadReader {
    /// `scan` over a contiguous buffer that holds the head from its first byte; only the
    /// bytes past `scanned` are examined.
    public mutating func scan(buffered bytes: UnsafeRawBufferPointer, maxHeadBytes: Int) -> Int? {
        guard bytes.count > scanned else { return scanned >= maxHeadBytes ? maxHeadBytes : nil }
        return scan(UnsafeRawBufferPointer(rebasing: bytes[scanned...]), maxHeadBytes: maxHeadBytes)
    }

    /// The request head in `bytes` (the buffer from the head's first byte), parsed once the
    /// reader knows where it ends; `.incomplete` until then. Resets after a decision.
    public mutating func request(in bytes: UnsafeRawBufferPointer, maxHeadBytes: Int) -> HeadParse<RequestHead> {
        read(bytes, maxHeadBytes: maxHeadBytes) { HeadParser.parseRequest($0, maxHeadBytes: maxHeadBytes) }
    }

    public mutating func response(in bytes: UnsafeRawBufferPointer, maxHeadBytes: Int) -> HeadParse<ResponseHead> {
        read(bytes, maxHeadBytes: maxHeadBytes) { HeadParser.parseResponse($0, maxHeadBytes: maxHeadBytes) }
    }

    /// Usually a whole head arrives in one read: the first bytes go straight to the parser,
    /// and only when they are not enough does the reader take over, from where they end.
    public mutating func read<Head>(_ bytes: UnsafeRawBufferPointer, maxHeadBytes: Int,
                                    parse: (UnsafeRawBufferPointer) -> HeadParse<Head>) -> HeadParse<Head> {
        if scanned == 0 {
            let first = UnsafeRawBufferPointer(rebasing: bytes[..<min(bytes.count, maxHeadBytes)])
            let outcome = parse(first)
            // The parser found no end and no fault in these bytes, so neither will the reader.
            if case .incomplete = outcome, scan(first, maxHeadBytes: maxHeadBytes) != nil { reset() }
            return outcome
        }
        guard let window = scan(buffered: bytes, maxHeadBytes: maxHeadBytes) else { return .incomplete }
        reset()
        return parse(UnsafeRawBufferPointer(rebasing: bytes[..<window]))
    }
}
