/// Serializes frames (RFC 9113 §4.1, §6). Callers keep each frame within the peer's
/// SETTINGS_MAX_FRAME_SIZE; `headerBlock` splits a block into HEADERS and CONTINUATION.
public enum H2FrameWriter {
    public static func write(_ frame: H2Frame, into out: inout [UInt8]) {
        switch frame {
        case .data(let stream, let data, let endStream, let padding):
            var flags = endStream ? H2FrameType.endStream : 0
            if padding != nil { flags |= H2FrameType.padded }
            header(length: data.count + (padding.map { $0 + 1 } ?? 0), type: H2FrameType.data, flags: flags, stream: stream, into: &out)
            if let padding { out.append(UInt8(padding)) }
            out.append(contentsOf: data)
            if let padding { out.append(contentsOf: repeatElement(0, count: padding)) }
        case .headers(let stream, let fragment, let endStream, let endHeaders, let priority, let padding):
            var flags = (endStream ? H2FrameType.endStream : 0) | (endHeaders ? H2FrameType.endHeaders : 0)
            if padding != nil { flags |= H2FrameType.padded }
            if priority != nil { flags |= H2FrameType.priorityFlag }
            let length = fragment.count + (padding.map { $0 + 1 } ?? 0) + (priority == nil ? 0 : 5)
            header(length: length, type: H2FrameType.headers, flags: flags, stream: stream, into: &out)
            if let padding { out.append(UInt8(padding)) }
            if let priority { write(priority, into: &out) }
            out.append(contentsOf: fragment)
            if let padding { out.append(contentsOf: repeatElement(0, count: padding)) }
        case .priority(let stream, let priority):
            header(length: 5, type: H2FrameType.priority, flags: 0, stream: stream, into: &out)
            write(priority, into: &out)
        case .rstStream(let stream, let code):
            header(length: 4, type: H2FrameType.rstStream, flags: 0, stream: stream, into: &out)
            uint32(code.rawValue, into: &out)
        case .settings(let ack, let settings):
            header(length: settings.count * 6, type: H2FrameType.settings, flags: ack ? H2FrameType.ack : 0, stream: 0, into: &out)
            for setting in settings {
                out.append(UInt8(setting.identifier >> 8))
                out.append(UInt8(setting.identifier & 0xFF))
                uint32(setting.value, into: &out)
            }
        case .pushPromise(let stream, let promised, let fragment, let endHeaders):
            header(length: 4 + fragment.count, type: H2FrameType.pushPromise, flags: endHeaders ? H2FrameType.endHeaders : 0, stream: stream, into: &out)
            uint32(promised, into: &out)
            out.append(contentsOf: fragment)
        case .ping(let ack, let opaque):
            header(length: 8, type: H2FrameType.ping, flags: ack ? H2FrameType.ack : 0, stream: 0, into: &out)
            uint32(UInt32(truncatingIfNeeded: opaque >> 32), into: &out)
            uint32(UInt32(truncatingIfNeeded: opaque), into: &out)
        case .goaway(let lastStream, let code, let debug):
            header(length: 8 + debug.count, type: H2FrameType.goaway, flags: 0, stream: 0, into: &out)
            uint32(lastStream, into: &out)
            uint32(code.rawValue, into: &out)
            out.append(contentsOf: debug)
        case .windowUpdate(let stream, let increment):
            header(length: 4, type: H2FrameType.windowUpdate, flags: 0, stream: stream, into: &out)
            uint32(increment, into: &out)
        case .continuation(let stream, let fragment, let endHeaders):
            header(length: fragment.count, type: H2FrameType.continuation, flags: endHeaders ? H2FrameType.endHeaders : 0, stream: stream, into: &out)
            out.append(contentsOf: fragment)
        case .unknown(let type, let stream):
            header(length: 0, type: type, flags: 0, stream: stream, into: &out)
        }
    }

    /// A header block as one HEADERS frame and as many CONTINUATION frames as `maxFrameSize` needs.
    public static func headerBlock(_ block: [UInt8], stream: UInt32, endStream: Bool, maxFrameSize: Int, into out: inout [UInt8]) {
        var offset = min(block.count, maxFrameSize)
        write(.headers(stream: stream, fragment: Array(block[0..<offset]), endStream: endStream, endHeaders: offset == block.count), into: &out)
        while offset < block.count {
            let end = min(block.count, offset + maxFrameSize)
            write(.continuation(stream: stream, fragment: Array(block[offset..<end]), endHeaders: end == block.count), into: &out)
            offset = end
        }
    }

    static let frameHeaderLength = 9
    /// Room for a frame header written once the payload behind it is (`headersFrameHeader`).
    static let headerPlaceholder = [UInt8](repeating: 0, count: frameHeaderLength)

    /// Writes a HEADERS frame header without padding or priority over the 9 octets at `offset`.
    static func headersFrameHeader(length: Int, stream: UInt32, endStream: Bool, endHeaders: Bool, at offset: Int, in out: inout [UInt8]) {
        let flags = (endStream ? H2FrameType.endStream : 0) | (endHeaders ? H2FrameType.endHeaders : 0)
        fill(at: offset, in: &out, length: length, type: H2FrameType.headers, flags: flags, stream: stream)
    }

    private static func fill(at offset: Int, in out: inout [UInt8], length: Int, type: UInt8, flags: UInt8, stream: UInt32) {
        out.withUnsafeMutableBufferPointer { bytes in
            fill(UnsafeMutableBufferPointer(rebasing: bytes[offset..<(offset + frameHeaderLength)]), length: length, type: type, flags: flags, stream: stream)
        }
    }

    /// A DATA frame's header, for a driver that writes the payload from its own buffers.
    public static func withDataFrameHeader<R>(length: Int, stream: UInt32, endStream: Bool, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: frameHeaderLength) { bytes in
            fill(bytes, length: length, type: H2FrameType.data, flags: endStream ? H2FrameType.endStream : 0, stream: stream)
            return body(UnsafeRawBufferPointer(bytes))
        }
    }

    static func dataFrameHeader(length: Int, stream: UInt32, endStream: Bool, into out: inout [UInt8]) {
        header(length: length, type: H2FrameType.data, flags: endStream ? H2FrameType.endStream : 0, stream: stream, into: &out)
    }

    private static func fill(_ bytes: UnsafeMutableBufferPointer<UInt8>, length: Int, type: UInt8, flags: UInt8, stream: UInt32) {
        let id = stream & 0x7FFF_FFFF
        bytes[0] = UInt8(truncatingIfNeeded: length >> 16)
        bytes[1] = UInt8(truncatingIfNeeded: length >> 8)
        bytes[2] = UInt8(truncatingIfNeeded: length)
        bytes[3] = type
        bytes[4] = flags
        bytes[5] = UInt8(truncatingIfNeeded: id >> 24)
        bytes[6] = UInt8(truncatingIfNeeded: id >> 16)
        bytes[7] = UInt8(truncatingIfNeeded: id >> 8)
        bytes[8] = UInt8(truncatingIfNeeded: id)
    }

    private static func header(length: Int, type: UInt8, flags: UInt8, stream: UInt32, into out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: headerPlaceholder)
        fill(at: start, in: &out, length: length, type: type, flags: flags, stream: stream)
    }

    private static func write(_ priority: H2Priority, into out: inout [UInt8]) {
        uint32(priority.dependency | (priority.exclusive ? 0x8000_0000 : 0), into: &out)
        out.append(priority.weight)
    }

    private static func uint32(_ value: UInt32, into out: inout [UInt8]) {
        out.append(UInt8(truncatingIfNeeded: value >> 24))
        out.append(UInt8(truncatingIfNeeded: value >> 16))
        out.append(UInt8(truncatingIfNeeded: value >> 8))
        out.append(UInt8(truncatingIfNeeded: value))
    }
}
