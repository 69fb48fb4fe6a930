/// `date/region/service/aws4_request`: what a derived key is good for. Also read back from a
/// client's own `Credential=` (header form) or `X-Amz-Credential` (query form), whose region and
/// service are the last resort when neither the configuration nor the host name names them.
public struct AWSCredentialScope: Equatable, Hashable, Sendable {
    /// `YYYYMMDD`.
    public let date: String
    public let region: String
    public let service: String

    public init(date: String, region: String, service: String) {
        self.date = date
        self.region = region
        self.service = service
    }

    public var text: String { "\(date)/\(region)/\(service)/aws4_request" }

    /// Parses `AKID/20150830/us-east-1/service/aws4_request`, returning the access key apart.
    /// Region and service must be plain tokens (letters, digits, `-`, `_`, `.`): a client's scope
    /// feeds our own signature and our logs, so nothing else is taken from it.
    public static func parseCredential(_ credential: Substring) throws -> (accessKeyID: Substring, scope: AWSCredentialScope) {
        let parts = credential.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[4] == "aws4_request" else {
            throw AWSSigningError.invalidScope("expected access-key/date/region/service/aws4_request")
        }
        guard parts[1].count == 8, parts[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw AWSSigningError.invalidScope("the date is not YYYYMMDD")
        }
        for part in [parts[2], parts[3]] where !isToken(part) {
            throw AWSSigningError.invalidScope("region and service must be 1 to 64 letters, digits, '-', '_' or '.'")
        }
        return (parts[0], AWSCredentialScope(date: String(parts[1]), region: String(parts[2]), service: String(parts[3])))
    }

    static func isToken(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.utf8.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x2D || byte == 0x5F || byte == 0x2E
        }
    }
}
