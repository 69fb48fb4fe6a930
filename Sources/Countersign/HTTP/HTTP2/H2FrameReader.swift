/// Takes a connection's octets as they come and yields whole frames (RFC 9113 §4.1), checking
/// what can be checked from a frame alone: its size against our SETTINGS_MAX_FRAME_SIZE, its
/// stream identifier where §6 fixes it, fixed payload lengths, and padding.
///
/// Octets are held only until their frame is complete, so what it holds is bounded by one
/// frame (`maxFrameSize` + 9) plus whatever the caller appends before asking for frames.
public struct H2FrameReader: Sendable {
    /// RFC 9113 §3.4: what a client sends first.
    public static let clientPreface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    public var maxFrameSize: Int
    private var buffer: [UInt8] = []
    private var start = 0
    /// How many octets of the client preface are still expected (server role).
    private var prefaceRemaining: Int

    public init(maxFrameSize: Int = 16384, expectingPreface: Bool) {
        self.maxFrameSize = maxFrameSize
        prefaceRemaining = expectingPreface ? Self.clientPreface.count : 0
    }

    public var bufferedCount: Int { buffer.count - start }
    /// Octets of storage held, for tests of what an idle connection costs.
    var heldCapacity: Int { buffer.capacity }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start == buffer.count {
            // Everything read: an idle connection keeps no buffer.
            buffer = []
            start = 0
        } else if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, nil when more octets are needed. A `.stream` failure consumed its
    /// frame and reading may go on; after a `.connection` failure the connection is over.
    public mutating func next() throws(H2Failure) -> H2Frame? {
        if prefaceRemaining > 0 {
            let offset = Self.clientPreface.count - prefaceRemaining
            let take = min(prefaceRemaining, bufferedCount)
            for index in 0..<take where buffer[start + index] != Self.clientPreface[offset + index] {
                throw .connection(.protocolError, reason: "invalid connection preface")
            }
            start += take
            prefaceRemaining -= take
            if prefaceRemaining > 0 { return nil }
        }
        guard bufferedCount >= 9 else {
            if bufferedCount == 0, !buffer.isEmpty {
                buffer = []
                start = 0
            }
            return nil
        }
        let length = Int(buffer[start]) << 16 | Int(buffer[start + 1]) << 8 | Int(buffer[start + 2])
        guard length <= maxFrameSize else {
            throw .connection(.frameSizeError, reason: "frame of \(length) octets above SETTINGS_MAX_FRAME_SIZE \(maxFrameSize)")
        }
        guard bufferedCount >= 9 + length else { return nil }
        let type = buffer[start + 3]
        let flags = buffer[start + 4]
        let stream = readUInt32(start + 5) & 0x7FFF_FFFF
        let payload = (start + 9)..<(start + 9 + length)
        start += 9 + length
        return try H2FrameParser(bytes: buffer, payload: payload, type: type, flags: flags, stream: stream).parse()
    }

    private func readUInt32(_ at: Int) -> UInt32 {
        UInt32(buffer[at]) << 24 | UInt32(buffer[at + 1]) << 16 | UInt32(buffer[at + 2]) << 8 | UInt32(buffer[at + 3])
    }
}

/// One frame's payload into an `H2Frame`, with §6's per-type rules.
private struct H2FrameParser {
    let bytes: [UInt8]
    let payload: Range<Int>
    let type: UInt8
    let flags: UInt8
    let stream: UInt32

    private var length: Int { payload.count }
    private func has(_ flag: UInt8) -> Bool { flags & flag != 0 }

    private func uint32(_ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }

    private func connectionError(_ code: H2ErrorCode, _ reason: String) -> H2Failure { .connection(code, reason: reason) }

    func parse() throws(H2Failure) -> H2Frame {
        switch type {
        case H2FrameType.data:
            guard stream != 0 else { throw connectionError(.protocolError, "DATA on stream 0") }
            let (body, padding) = try unpadded(payload)
            return .data(stream: stream, data: Array(bytes[body]), endStream: has(H2FrameType.endStream), padding: padding)
        case H2FrameType.headers:
            guard stream != 0 else { throw connectionError(.protocolError, "HEADERS on stream 0") }
            var (body, padding) = try unpadded(payload)
            var priority: H2Priority?
            if has(H2FrameType.priorityFlag) {
                guard body.count >= 5 else { throw connectionError(.frameSizeError, "HEADERS too short for its priority") }
                priority = self.priority(at: body.lowerBound)
                body = (body.lowerBound + 5)..<body.upperBound
            }
            return .headers(stream: stream, fragment: Array(bytes[body]), endStream: has(H2FrameType.endStream),
                            endHeaders: has(H2FrameType.endHeaders), priority: priority, padding: padding)
        case H2FrameType.priority:
            guard stream != 0 else { throw connectionError(.protocolError, "PRIORITY on stream 0") }
            guard length == 5 else { throw H2Failure.stream(stream, .frameSizeError, reason: "PRIORITY of \(length) octets") }
            return .priority(stream: stream, priority(at: payload.lowerBound))
        case H2FrameType.rstStream:
            guard stream != 0 else { throw connectionError(.protocolError, "RST_STREAM on stream 0") }
            guard length == 4 else { throw connectionError(.frameSizeError, "RST_STREAM of \(length) octets") }
            return .rstStream(stream: stream, H2ErrorCode(rawValue: uint32(payload.lowerBound)))
        case H2FrameType.settings:
            guard stream == 0 else { throw connectionError(.protocolError, "SETTINGS on stream \(stream)") }
            if has(H2FrameType.ack) {
                guard length == 0 else { throw connectionError(.frameSizeError, "SETTINGS ACK with a payload") }
                return .settings(ack: true, [])
            }
            guard length % 6 == 0 else { throw connectionError(.frameSizeError, "SETTINGS of \(length) octets") }
            let settings = stride(from: payload.lowerBound, to: payload.upperBound, by: 6).map { at in
                H2Setting(UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1]), uint32(at + 2))
            }
            return .settings(ack: false, settings)
        case H2FrameType.pushPromise:
            guard stream != 0 else { throw connectionError(.protocolError, "PUSH_PROMISE on stream 0") }
            let (body, _) = try unpadded(payload)
            guard body.count >= 4 else { throw connectionError(.frameSizeError, "PUSH_PROMISE too short") }
            return .pushPromise(stream: stream, promised: uint32(body.lowerBound) & 0x7FFF_FFFF,
                                fragment: Array(bytes[(body.lowerBound + 4)..<body.upperBound]), endHeaders: has(H2FrameType.endHeaders))
        case H2FrameType.ping:
            guard stream == 0 else { throw connectionError(.protocolError, "PING on stream \(stream)") }
            guard length == 8 else { throw connectionError(.frameSizeError, "PING of \(length) octets") }
            let opaque = UInt64(uint32(payload.lowerBound)) << 32 | UInt64(uint32(payload.lowerBound + 4))
            return .ping(ack: has(H2FrameType.ack), opaque: opaque)
        case H2FrameType.goaway:
            guard stream == 0 else { throw connectionError(.protocolError, "GOAWAY on stream \(stream)") }
            guard length >= 8 else { throw connectionError(.frameSizeError, "GOAWAY of \(length) octets") }
            return .goaway(lastStream: uint32(payload.lowerBound) & 0x7FFF_FFFF, H2ErrorCode(rawValue: uint32(payload.lowerBound + 4)),
                           debug: Array(bytes[(payload.lowerBound + 8)..<payload.upperBound]))
        case H2FrameType.windowUpdate:
            guard length == 4 else { throw connectionError(.frameSizeError, "WINDOW_UPDATE of \(length) octets") }
            return .windowUpdate(stream: stream, increment: uint32(payload.lowerBound) & 0x7FFF_FFFF)
        case H2FrameType.continuation:
            guard stream != 0 else { throw connectionError(.protocolError, "CONTINUATION on stream 0") }
            return .continuation(stream: stream, fragment: Array(bytes[payload]), endHeaders: has(H2FrameType.endHeaders))
        default:
            return .unknown(type: type, stream: stream)
        }
    }

    /// §6.1: with PADDED, the first octet says how many octets of padding end the payload;
    /// padding as long as the payload or longer is a connection error.
    private func unpadded(_ range: Range<Int>) throws(H2Failure) -> (Range<Int>, Int?) {
        guard has(H2FrameType.padded) else { return (range, nil) }
        guard range.count >= 1 else { throw connectionError(.frameSizeError, "padded frame without a pad length") }
        let padding = Int(bytes[range.lowerBound])
        guard padding < range.count else { throw connectionError(.protocolError, "padding of \(padding) octets in a payload of \(range.count)") }
        return ((range.lowerBound + 1)..<(range.upperBound - padding), padding)
    }

    private func priority(at: Int) -> H2Priority {
        let word = uint32(at)
        return H2Priority(exclusive: word & 0x8000_0000 != 0, dependency: word & 0x7FFF_FFFF, weight: bytes[at + 4])
    }
}
