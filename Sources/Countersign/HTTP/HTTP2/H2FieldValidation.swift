/// RFC 9113 §8.2 and §8.3: whether a decoded field list is a well-formed request, response
/// or trailer section. A malformed one is a stream error PROTOCOL_ERROR (§8.1.1); the reason
/// names the rule, never the peer's octets.
enum H2FieldValidation {
    enum Kind: Equatable {
        case request
        case response
        case trailers
    }

    /// What a valid head says that the connection needs: the response status (client role) and
    /// the content-length the body must match (§8.1.1).
    struct Summary: Equatable {
        var status: Int?
        var method: [UInt8]?
        var contentLength: Int?
    }

    /// Names compared as octets (no String per field: this runs for every head).
    private enum Name {
        static let method = Array(":method".utf8), scheme = Array(":scheme".utf8), authority = Array(":authority".utf8)
        static let path = Array(":path".utf8), status = Array(":status".utf8)
        static let te = Array("te".utf8), host = Array("host".utf8), contentLength = Array("content-length".utf8)
        static let trailers = Array("trailers".utf8), connect = Array("CONNECT".utf8)
        static let http = Array("http".utf8), https = Array("https".utf8)
        static let connectionSpecific = ["connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade"].map { Array($0.utf8) }
    }

    static func validate(_ fields: [HPACKField], as kind: Kind) -> Result<Summary, H2MalformedReason> {
        var summary = Summary()
        var regularStarted = false
        var authority: [UInt8]?
        var host: [UInt8]?
        var scheme: [UInt8]?
        var path: [UInt8]?
        for field in fields {
            guard validName(field.name) else { return .failure(.invalidName) }
            guard validValue(field.value) else { return .failure(.invalidValue) }
            if field.name.first == UInt8(ascii: ":") {
                guard kind != .trailers else { return .failure(.pseudoInTrailers) }
                guard !regularStarted else { return .failure(.pseudoAfterRegular) }
                switch (kind, field.name) {
                case (.request, Name.method):
                    guard summary.method == nil else { return .failure(.duplicatePseudo) }
                    summary.method = field.value
                case (.request, Name.scheme):
                    guard scheme == nil else { return .failure(.duplicatePseudo) }
                    scheme = field.value
                case (.request, Name.authority):
                    guard authority == nil else { return .failure(.duplicatePseudo) }
                    authority = field.value
                case (.request, Name.path):
                    guard path == nil else { return .failure(.duplicatePseudo) }
                    path = field.value
                case (.response, Name.status):
                    guard summary.status == nil else { return .failure(.duplicatePseudo) }
                    guard field.value.count == 3, field.value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), field.value[0] != 0x30 else {
                        return .failure(.invalidStatus)
                    }
                    summary.status = field.value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
                default:
                    return .failure(.unknownPseudo)
                }
                continue
            }
            regularStarted = true
            switch field.name.count {
            case 2 where field.name == Name.te:
                guard field.value == Name.trailers else { return .failure(.teNotTrailers) }
            case 4 where field.name == Name.host:
                guard host == nil else { return .failure(.hostMismatch) }
                host = field.value
            case 14 where field.name == Name.contentLength:
                guard !field.value.isEmpty, field.value.count <= 18, field.value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    return .failure(.invalidContentLength)
                }
                let length = field.value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
                guard summary.contentLength == nil || summary.contentLength == length else { return .failure(.invalidContentLength) }
                summary.contentLength = length
            case 7, 10, 16, 17:
                guard !Name.connectionSpecific.contains(field.name) else { return .failure(.connectionSpecific) }
            default: break
            }
        }
        switch kind {
        case .request:
            guard let method = summary.method else { return .failure(.missingPseudo) }
            if method == Name.connect {
                // §8.5: only :method and :authority.
                guard authority != nil, scheme == nil, path == nil else { return .failure(.missingPseudo) }
            } else {
                guard scheme != nil, let path, !path.isEmpty else { return .failure(.missingPseudo) }
            }
            if let authority {
                // §8.3.1: no userinfo; a Host field must name the same authority.
                guard !authority.contains(UInt8(ascii: "@")) else { return .failure(.userinfoInAuthority) }
                if let host, host != authority { return .failure(.hostMismatch) }
            } else if host == nil, method != Name.connect, scheme == Name.https || scheme == Name.http {
                return .failure(.missingAuthority)
            }
        case .response:
            guard summary.status != nil else { return .failure(.missingPseudo) }
        case .trailers:
            break
        }
        return .success(summary)
    }

    /// §8.2.1: no upper case, no controls, space, DEL or non-ASCII; not empty.
    private static func validName(_ name: [UInt8]) -> Bool {
        guard !name.isEmpty else { return false }
        for (index, octet) in name.enumerated() {
            if octet == UInt8(ascii: ":"), index == 0 { continue }
            guard octet > 0x20, octet < 0x7F, !(0x41...0x5A).contains(octet), octet != UInt8(ascii: ":") else { return false }
        }
        return name != [UInt8(ascii: ":")]
    }

    /// §8.2.1: no NUL, CR or LF; no leading or trailing space or tab.
    private static func validValue(_ value: [UInt8]) -> Bool {
        if let first = value.first, first == 0x20 || first == 0x09 { return false }
        if let last = value.last, last == 0x20 || last == 0x09 { return false }
        return !value.contains { $0 == 0 || $0 == 0x0A || $0 == 0x0D }
    }
}

/// Why a field section is malformed (RFC 9113 §8.1.1), for logs and tests.
public enum H2MalformedReason: Error, Equatable, Sendable {
    case invalidName, invalidValue, pseudoInTrailers, pseudoAfterRegular, unknownPseudo, duplicatePseudo, missingPseudo
    case invalidStatus, connectionSpecific, teNotTrailers, invalidContentLength, hostMismatch, userinfoInAuthority
    case missingAuthority, contentLengthMismatch, secondHeadWithoutEndStream
}
