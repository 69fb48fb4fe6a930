/// A strict, bounded, incremental parser of an aws-chunked body, as S3 defines it:
///
///     hex-size[;chunk-signature=64-hex]\r\n data \r\n   (repeated)
///     0[;chunk-signature=64-hex]\r\n
///     [name:value\r\n ...] [x-amz-trailer-signature:64-hex\r\n] \r\n
///
/// Sans-I/O: `feed` takes whatever bytes arrived and returns what became complete. A data chunk
/// is returned whole (its new signature must precede it on the wire), so at most one chunk —
/// `maximumChunkBytes` — is held. Anything else is refused: a size line or trailer past its
/// bound, a signature where none belongs or none where one must be, an extension other than
/// `chunk-signature`, a bare LF, data not followed by CRLF, bytes after the end.
public struct AWSChunkedParser {
    public enum Event: Equatable {
        /// One data chunk, with its size as the client wrote it (kept, so lengths do not change).
        case chunk(sizeText: String, data: [UInt8])
        /// The zero-length chunk.
        case finalChunk(sizeText: String)
        /// A trailing field, its line as sent (without CRLF) and its parts.
        case trailer(line: String, name: String, value: String)
        /// The client's `x-amz-trailer-signature` line was read (its value is not kept: it is
        /// replaced by ours).
        case trailerSignature
        /// The empty line that ends the body; nothing may follow.
        case end
    }

    private enum State {
        case sizeLine
        case data(sizeText: String, remaining: Int)
        case dataEnd(sizeText: String)
        /// After the final chunk: trailing fields so far, and the bytes they took.
        case trailerFields(count: Int, bytes: Int)
        /// `x-amz-trailer-signature` was read; only the closing empty line may follow.
        case afterTrailerSignature(count: Int, bytes: Int)
        case done
    }

    /// Whether chunks carry `chunk-signature` (the `STREAMING-AWS4-HMAC-SHA256-*` modes) and
    /// whether trailing fields may follow the final chunk (`*-TRAILER` modes).
    public let mode: AWSPayloadHash
    public let maximumChunkBytes: Int
    public let maximumTrailerBytes: Int
    public static let maximumTrailerFields = 16
    /// `ffffffff;chunk-signature=` + 64 hex is under 100 bytes; a longer line is an attack.
    static let maximumSizeLineBytes = 128

    private var state = State.sizeLine
    private var line: [UInt8] = []
    private var chunk: [UInt8] = []

    public init(mode: AWSPayloadHash, maximumChunkBytes: Int, maximumTrailerBytes: Int = 8192) throws {
        guard mode.isStreaming else { throw AWSSigningError.invalidChunk("\(mode.value) is not an aws-chunked mode") }
        self.mode = mode
        self.maximumChunkBytes = maximumChunkBytes
        self.maximumTrailerBytes = maximumTrailerBytes
    }

    public var isComplete: Bool { if case .done = state { true } else { false } }

    private var hasChunkSignatures: Bool { mode.hasChunkSignatures }
    private var hasTrailer: Bool { mode != .streamingSigned }

    public mutating func feed(_ bytes: some Collection<UInt8>) throws -> [Event] {
        var events: [Event] = []
        var index = bytes.startIndex
        while index != bytes.endIndex {
            switch state {
            case .done:
                throw AWSSigningError.invalidChunk("bytes after the end of the body")
            case .data(let sizeText, let remaining):
                let available = bytes.distance(from: index, to: bytes.endIndex)
                let take = min(available, remaining)
                let end = bytes.index(index, offsetBy: take)
                chunk.append(contentsOf: bytes[index..<end])
                index = end
                state = take == remaining ? .dataEnd(sizeText: sizeText) : .data(sizeText: sizeText, remaining: remaining - take)
            case .sizeLine, .dataEnd, .trailerFields, .afterTrailerSignature:
                let byte = bytes[index]
                index = bytes.index(after: index)
                if let event = try lineByte(byte) { events.append(event) }
            }
        }
        return events
    }

    /// Collects a CRLF-terminated line and acts on it when complete.
    private mutating func lineByte(_ byte: UInt8) throws -> Event? {
        let limit: Int
        switch state {
        case .trailerFields(_, let bytes), .afterTrailerSignature(_, let bytes): limit = maximumTrailerBytes - bytes
        default: limit = Self.maximumSizeLineBytes
        }
        if byte == 0x0A {
            guard line.last == 0x0D else { throw AWSSigningError.invalidChunk("a line ends in a bare LF") }
            line.removeLast()
            defer { line.removeAll(keepingCapacity: true) }
            return try completeLine(line)
        }
        guard line.count < limit else { throw AWSSigningError.invalidChunk("a chunk size line or trailer section is too long") }
        if let last = line.last, last == 0x0D { throw AWSSigningError.invalidChunk("a CR not followed by LF") }
        line.append(byte)
        return nil
    }

    private mutating func completeLine(_ line: [UInt8]) throws -> Event? {
        switch state {
        case .dataEnd(let sizeText):
            guard line.isEmpty else { throw AWSSigningError.invalidChunk("chunk data longer than its size") }
            state = .sizeLine
            defer { chunk = [] }
            return .chunk(sizeText: sizeText, data: chunk)
        case .sizeLine:
            let (sizeText, size) = try parseSizeLine(line)
            if size == 0 {
                state = .trailerFields(count: 0, bytes: 0)
                return .finalChunk(sizeText: sizeText)
            }
            chunk.reserveCapacity(size)
            state = .data(sizeText: sizeText, remaining: size)
            return nil
        case .trailerFields(let count, let bytes):
            if line.isEmpty {
                if mode == .streamingSignedWithTrailer, count > 0 {
                    throw AWSSigningError.invalidChunk("the trailer has no x-amz-trailer-signature")
                }
                state = .done
                return .end
            }
            return try parseTrailer(line, count: count, bytes: bytes + line.count + 2)
        case .afterTrailerSignature:
            guard line.isEmpty else { throw AWSSigningError.invalidChunk("a trailing field after x-amz-trailer-signature") }
            state = .done
            return .end
        case .data, .done:
            preconditionFailure("lines are read only between chunks")
        }
    }

    private func parseSizeLine(_ line: [UInt8]) throws -> (String, Int) {
        let semicolon = line.firstIndex(of: 0x3B) ?? line.endIndex
        let digits = line[..<semicolon]
        guard !digits.isEmpty, digits.count <= 8, digits.allSatisfy(Self.isHexDigit) else {
            throw AWSSigningError.invalidChunk("a chunk size is not 1 to 8 hex digits")
        }
        let size = Int(String(decoding: digits, as: UTF8.self), radix: 16)!
        guard size <= maximumChunkBytes else {
            throw AWSSigningError.invalidChunk("a chunk of \(size) bytes is over the limit of \(maximumChunkBytes)")
        }
        let extensionText = line[semicolon...]
        if hasChunkSignatures {
            let prefix = Array(";chunk-signature=".utf8)
            guard extensionText.count == prefix.count + 64, extensionText.starts(with: prefix),
                  extensionText.dropFirst(prefix.count).allSatisfy(Self.isLowerHexDigit) else {
                throw AWSSigningError.invalidChunk("a chunk without exactly one chunk-signature of 64 hex digits")
            }
        } else if !extensionText.isEmpty {
            throw AWSSigningError.invalidChunk("a chunk extension in an unsigned aws-chunked body")
        }
        return (String(decoding: digits, as: UTF8.self), size)
    }

    private mutating func parseTrailer(_ line: [UInt8], count: Int, bytes: Int) throws -> Event {
        guard hasTrailer else { throw AWSSigningError.invalidChunk("trailing fields in a body that declared none") }
        guard let colon = line.firstIndex(of: 0x3A), colon > 0, line[..<colon].allSatisfy(Self.isTokenByte) else {
            throw AWSSigningError.invalidChunk("a trailing field without a valid name")
        }
        let value = line[(colon + 1)...]
        guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
            throw AWSSigningError.invalidChunk("a trailing field value with a control character")
        }
        let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
        if name == "x-amz-trailer-signature" {
            guard mode == .streamingSignedWithTrailer else { throw AWSSigningError.invalidChunk("a trailer signature in an unsigned body") }
            state = .afterTrailerSignature(count: count, bytes: bytes)
            return .trailerSignature
        }
        guard count < Self.maximumTrailerFields else { throw AWSSigningError.invalidChunk("too many trailing fields") }
        state = .trailerFields(count: count + 1, bytes: bytes)
        return .trailer(line: String(decoding: line, as: UTF8.self), name: name, value: String(decoding: value, as: UTF8.self))
    }

    static func isHexDigit(_ byte: UInt8) -> Bool { isLowerHexDigit(byte) || (byte >= 0x41 && byte <= 0x46) }
    static func isLowerHexDigit(_ byte: UInt8) -> Bool { (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) }
    static func isTokenByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
}
