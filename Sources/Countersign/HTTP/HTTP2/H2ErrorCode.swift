/// RFC 9113 §7 error codes. A struct, not an enum: a peer may send codes we do not know, and
/// they must pass through without special meaning.
public struct H2ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let noError = H2ErrorCode(rawValue: 0x0)
    public static let protocolError = H2ErrorCode(rawValue: 0x1)
    public static let internalError = H2ErrorCode(rawValue: 0x2)
    public static let flowControlError = H2ErrorCode(rawValue: 0x3)
    public static let settingsTimeout = H2ErrorCode(rawValue: 0x4)
    public static let streamClosed = H2ErrorCode(rawValue: 0x5)
    public static let frameSizeError = H2ErrorCode(rawValue: 0x6)
    public static let refusedStream = H2ErrorCode(rawValue: 0x7)
    public static let cancel = H2ErrorCode(rawValue: 0x8)
    public static let compressionError = H2ErrorCode(rawValue: 0x9)
    public static let connectError = H2ErrorCode(rawValue: 0xA)
    public static let enhanceYourCalm = H2ErrorCode(rawValue: 0xB)
    public static let inadequateSecurity = H2ErrorCode(rawValue: 0xC)
    public static let http11Required = H2ErrorCode(rawValue: 0xD)

    private static let names = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
                                "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
                                "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"]

    public var description: String {
        rawValue < UInt32(Self.names.count) ? Self.names[Int(rawValue)] : "0x\(String(rawValue, radix: 16))"
    }
}

/// A violation found while reading: either the whole connection fails (GOAWAY then close), or
/// one stream does (RST_STREAM, the others go on). `reason` is for logs and never echoes peer bytes.
public enum H2Failure: Error, Equatable, Sendable {
    case connection(H2ErrorCode, reason: String)
    case stream(UInt32, H2ErrorCode, reason: String)
}
