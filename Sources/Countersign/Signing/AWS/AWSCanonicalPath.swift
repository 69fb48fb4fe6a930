/// The canonical URI of a SigV4 canonical request. Every service but S3 normalizes the path
/// (dot segments removed, empty segments collapsed) and percent-encodes the path *as sent* once
/// more, so an SDK's `%20` is signed as `%2520`. S3 signs its path exactly as sent: an object
/// key may hold `//` or `..`, and normalizing would sign a different object.
public enum AWSPathEncoding: Equatable, Sendable {
    /// Normalized, then encoded again (every service but S3; the signing suite's `normalize: true`).
    case normalizedAndEncoded
    /// Encoded again without normalizing (the signing suite's `normalize: false`).
    case encoded
    /// As sent (S3 and its compatible stores).
    case asSent

    /// S3's exception, by signing name.
    public static func forService(_ service: String) -> AWSPathEncoding { isS3(service) ? .asSent : .normalizedAndEncoded }

    /// S3 and its variants: paths as sent, `X-Amz-Content-Sha256` required, presigned URLs unsigned.
    public static func isS3(_ service: String) -> Bool { service == "s3" || service == "s3-object-lambda" || service == "s3express" }
}

enum AWSCanonicalPath {
    static func canonical(_ path: String, encoding: AWSPathEncoding) -> String {
        let path = path.isEmpty ? "/" : path
        switch encoding {
        case .asSent: return path
        case .encoded: return PercentEncoding.string(path.utf8, keeping: .unreservedAndSlash)
        case .normalizedAndEncoded: return PercentEncoding.string(removingDotSegments(path).utf8, keeping: .unreservedAndSlash)
        }
    }

    /// RFC 3986 §5.2.4 on segments, with empty segments dropped as AWS requires (`//a//` is
    /// `/a/`). A leading slash is kept; a trailing one too when a segment remains.
    static func removingDotSegments(_ path: String) -> String {
        var kept: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch segment {
            case ".": continue
            case "..": if !kept.isEmpty { kept.removeLast() }
            default: kept.append(segment)
            }
        }
        let leading = path.hasPrefix("/") ? "/" : ""
        let trailing = path.hasSuffix("/") && !kept.isEmpty ? "/" : ""
        return leading + kept.joined(separator: "/") + trailing
    }
}
