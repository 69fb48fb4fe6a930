/// The chunked transfer coding as a state machine over lines and data counts, so the
/// I/O shell can move chunk data between buffers without it ever entering Swift: the
/// decoder only sees the chunk-size lines, the CRLF after each chunk and the trailers.
public struct ChunkedDecoder: Sendable {
    public enum Need: Equatable, Sendable {
        /// A CRLF-terminated line (offer it without the CRLF).
        case line
        /// This many bytes of chunk data to pass through.
        case data(UInt64)
        case done
    }

    public enum Event: Equatable, Sendable {
        case chunk(size: UInt64)
        case chunkEnd
        case lastChunk
        case trailer(HeaderField)
        case end
    }

    private enum State: Sendable {
        case size, data(UInt64), dataEnd, trailers, done
    }

    private var state: State = .size
    private var trailerBytes = 0
    public let maxTrailerBytes: Int

    public static let maxLineLength = 4096

    public init(maxTrailerBytes: Int = 16384) {
        self.maxTrailerBytes = maxTrailerBytes
    }

    public var need: Need {
        switch state {
        case .size, .dataEnd, .trailers: return .line
        case .data(let remaining): return .data(remaining)
        case .done: return .done
        }
    }

    /// Reports that `count` bytes of chunk data were passed through.
    public mutating func consumedData(_ count: UInt64) {
        guard case .data(let remaining) = state else { return }
        state = remaining > count ? .data(remaining - count) : .dataEnd
    }

    /// Offers one line (without its CRLF).
    public mutating func consumeLine(_ line: UnsafeRawBufferPointer) throws -> Event {
        switch state {
        case .size:
            let size = try Self.parseSizeLine(line)
            if size == 0 {
                state = .trailers
                return .lastChunk
            }
            state = .data(size)
            return .chunk(size: size)
        case .dataEnd:
            guard line.isEmpty else { throw HTTPParseError(.badChunk, "chunk data longer than its size") }
            state = .size
            return .chunkEnd
        case .trailers:
            if line.isEmpty {
                state = .done
                return .end
            }
            trailerBytes += line.count + 2
            guard trailerBytes <= maxTrailerBytes else {
                throw HTTPParseError(.headTooLarge, "trailer section larger than \(maxTrailerBytes) bytes")
            }
            let field = try HeadParser.parseField(line, 0..<line.count)
            return .trailer(field)
        case .data, .done:
            throw HTTPParseError(.badChunk, "unexpected line in chunked body")
        }
    }

    /// chunk-size [ chunk-ext ]: hex digits, then optional `;name[=value]` extensions, which
    /// are dropped when forwarding. Bare CR or LF never reach here (the shell splits on CRLF).
    static func parseSizeLine(_ line: UnsafeRawBufferPointer) throws -> UInt64 {
        var size: UInt64 = 0
        var digits = 0
        var index = 0
        while index < line.count, let value = hexValue(line[index]) {
            guard digits < 16 else { throw HTTPParseError(.badChunk, "chunk size too large") }
            size = size << 4 | UInt64(value)
            digits += 1
            index += 1
        }
        guard digits > 0 else { throw HTTPParseError(.badChunk, "invalid chunk size") }
        // BWS before an extension is tolerated; anything else must be an extension.
        while index < line.count, line[index] == SP || line[index] == HTAB { index += 1 }
        if index < line.count {
            guard line[index] == UInt8(ascii: ";") else { throw HTTPParseError(.badChunk, "invalid chunk size") }
            for byte in line[index...] where !(CharacterClass.isFieldValueChar(byte)) {
                _ = byte
                throw HTTPParseError(.badChunk, "invalid character in chunk extension")
            }
        }
        return size
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }
}
