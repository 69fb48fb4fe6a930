/// RFC 9113 §6: one frame, as read or to be written. Stream identifiers have the reserved bit
/// cleared; padding is stripped on reading, but its length is kept because it counts against
/// flow control (§6.1).
public enum H2Frame: Equatable, Sendable {
    case data(stream: UInt32, data: [UInt8], endStream: Bool, padding: Int? = nil)
    case headers(stream: UInt32, fragment: [UInt8], endStream: Bool, endHeaders: Bool, priority: H2Priority? = nil, padding: Int? = nil)
    case priority(stream: UInt32, H2Priority)
    case rstStream(stream: UInt32, H2ErrorCode)
    case settings(ack: Bool, [H2Setting])
    case pushPromise(stream: UInt32, promised: UInt32, fragment: [UInt8], endHeaders: Bool)
    case ping(ack: Bool, opaque: UInt64)
    case goaway(lastStream: UInt32, H2ErrorCode, debug: [UInt8])
    case windowUpdate(stream: UInt32, increment: UInt32)
    case continuation(stream: UInt32, fragment: [UInt8], endHeaders: Bool)
    /// An extension frame type we do not know: read, then ignored (§5.5).
    case unknown(type: UInt8, stream: UInt32)

    public var stream: UInt32 {
        switch self {
        case .data(let stream, _, _, _), .headers(let stream, _, _, _, _, _), .priority(let stream, _), .rstStream(let stream, _),
             .pushPromise(let stream, _, _, _), .windowUpdate(let stream, _), .continuation(let stream, _, _), .unknown(_, let stream):
            return stream
        case .settings, .ping, .goaway:
            return 0
        }
    }

    /// Octets that count against flow-control windows: a DATA frame's whole payload.
    public var flowControlledLength: Int {
        guard case .data(_, let data, _, let padding) = self else { return 0 }
        return data.count + (padding.map { $0 + 1 } ?? 0)
    }
}

/// The PRIORITY fields (§5.3.2 in RFC 7540); RFC 9113 lets us ignore them, but a stream that
/// depends on itself is still an error.
public struct H2Priority: Equatable, Sendable {
    public var exclusive: Bool
    public var dependency: UInt32
    public var weight: UInt8

    public init(exclusive: Bool = false, dependency: UInt32 = 0, weight: UInt8 = 15) {
        self.exclusive = exclusive
        self.dependency = dependency
        self.weight = weight
    }
}

/// One SETTINGS parameter (§6.5.2); unknown identifiers are kept so that they can be ignored.
public struct H2Setting: Equatable, Sendable {
    public var identifier: UInt16
    public var value: UInt32

    public init(_ identifier: UInt16, _ value: UInt32) {
        self.identifier = identifier
        self.value = value
    }

    public static let headerTableSize: UInt16 = 0x1
    public static let enablePush: UInt16 = 0x2
    public static let maxConcurrentStreams: UInt16 = 0x3
    public static let initialWindowSize: UInt16 = 0x4
    public static let maxFrameSize: UInt16 = 0x5
    public static let maxHeaderListSize: UInt16 = 0x6
}

/// Frame type codes (§6) and flag bits.
enum H2FrameType {
    static let data: UInt8 = 0x0, headers: UInt8 = 0x1, priority: UInt8 = 0x2, rstStream: UInt8 = 0x3, settings: UInt8 = 0x4
    static let pushPromise: UInt8 = 0x5, ping: UInt8 = 0x6, goaway: UInt8 = 0x7, windowUpdate: UInt8 = 0x8, continuation: UInt8 = 0x9

    static let endStream: UInt8 = 0x1, ack: UInt8 = 0x1, endHeaders: UInt8 = 0x4, padded: UInt8 = 0x8, priorityFlag: UInt8 = 0x20
}
