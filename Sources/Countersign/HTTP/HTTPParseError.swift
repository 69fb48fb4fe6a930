/// Why a message was refused. `detail` is the sentence that goes into `Proxy-Status` and
/// the access log; `status` is what a client gets for a bad request.
public struct HTTPParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case badStartLine
        case unsupportedVersion
        case badFieldName
        case whitespaceBeforeColon
        case badFieldValue
        case obsoleteLineFolding
        case bareCR
        case bareLF
        case headTooLarge
        case badTarget
        case badFraming
        case badChunk
        case unsupportedTransferCoding
    }

    public var kind: Kind
    public var detail: String

    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// The status a proxy answers a client's bad request with.
    public var status: Int {
        switch kind {
        case .headTooLarge: return 431
        case .unsupportedVersion: return 505
        case .unsupportedTransferCoding: return 501
        default: return 400
        }
    }

    public var description: String { detail }
}
