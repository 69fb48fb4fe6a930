import CountersignSupport

/// The last line of a canonical request, and the `X-Amz-Content-Sha256` value: what the signature
/// says about the body.
public enum AWSPayloadHash: Equatable, Sendable {
    /// The body's SHA-256, lower-case hex (the whole body was held and hashed).
    case sha256Hex(String)
    /// `UNSIGNED-PAYLOAD`: the body is not covered (TLS protects it in transit).
    case unsigned
    /// `STREAMING-AWS4-HMAC-SHA256-PAYLOAD`: an aws-chunked body, each chunk signed in a chain
    /// seeded by the request's signature.
    case streamingSigned
    /// `STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER`: the same, ending in a signed trailer.
    case streamingSignedWithTrailer
    /// `STREAMING-UNSIGNED-PAYLOAD-TRAILER`: aws-chunked, chunks unsigned, a checksum trailer.
    case streamingUnsignedWithTrailer

    /// SHA-256 of nothing, the hash of a request without a body.
    public static let emptyBody = AWSPayloadHash.sha256Hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")

    public static func of(body: [UInt8]) -> AWSPayloadHash { .sha256Hex(Hex.encode(SHA256.hash(body))) }

    public var value: String {
        switch self {
        case .sha256Hex(let hex): return hex
        case .unsigned: return "UNSIGNED-PAYLOAD"
        case .streamingSigned: return "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
        case .streamingSignedWithTrailer: return "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
        case .streamingUnsignedWithTrailer: return "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
        }
    }

    /// A client's `X-Amz-Content-Sha256`; nil for a value SigV4 does not define (ECDSA's
    /// `STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD` among them: SigV4a is not made here).
    public init?(headerValue: String) {
        switch headerValue {
        case "UNSIGNED-PAYLOAD": self = .unsigned
        case "STREAMING-AWS4-HMAC-SHA256-PAYLOAD": self = .streamingSigned
        case "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER": self = .streamingSignedWithTrailer
        case "STREAMING-UNSIGNED-PAYLOAD-TRAILER": self = .streamingUnsignedWithTrailer
        default:
            guard headerValue.utf8.count == 64, headerValue.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
                return nil
            }
            self = .sha256Hex(headerValue)
        }
    }

    /// The body is aws-chunked (`Content-Encoding: aws-chunked`), whatever the proxy's `payload`.
    public var isStreaming: Bool {
        switch self {
        case .sha256Hex, .unsigned: return false
        case .streamingSigned, .streamingSignedWithTrailer, .streamingUnsignedWithTrailer: return true
        }
    }

    /// Every chunk carries a `chunk-signature` to be made anew.
    public var hasChunkSignatures: Bool { self == .streamingSigned || self == .streamingSignedWithTrailer }
}
