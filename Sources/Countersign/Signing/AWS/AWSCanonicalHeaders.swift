/// Which request fields a SigV4 signature covers. `host` and the `x-amz-*` fields the signer adds
/// are always covered; hop-by-hop fields never are, nor those the client names in `Connection`
/// (a proxy on the way drops or rewrites them, and the signature would no longer verify), nor
/// `Authorization`.
public enum AWSHeaderSelection: Equatable, Sendable {
    /// Every end-to-end field but those clients and proxies are known to change in transit
    /// (`User-Agent`, `Expect`, `X-Amzn-Trace-Id`) — botocore's choice, and the signing suite's.
    case allEndToEnd
    /// These lower-case names when present: re-signing keeps the `SignedHeaders` the SDK chose,
    /// which is what its service expects (e.g. `content-md5`, `x-amz-checksum-*`).
    case named(Set<String>)

    static let neverSigned: Set<String> = [
        "authorization", "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
        "te", "trailer", "transfer-encoding", "upgrade",
    ]
    static let unsignedByDefault: Set<String> = ["user-agent", "expect", "x-amzn-trace-id"]

    func covers(_ lowercasedName: String, connectionOptions: Set<String> = []) -> Bool {
        if Self.neverSigned.contains(lowercasedName) || connectionOptions.contains(lowercasedName) { return false }
        switch self {
        case .allEndToEnd: return !Self.unsignedByDefault.contains(lowercasedName)
        case .named(let names): return names.contains(lowercasedName) || lowercasedName == "host"
        }
    }
}

/// The canonical headers block and the signed-headers list of a canonical request: names
/// lower-cased and sorted, each value trimmed with inner runs of spaces and tabs made one space,
/// the values of a repeated name joined with `,` in the order they were sent.
struct AWSCanonicalHeaders {
    let block: String
    let signedHeaders: String

    init(_ fields: [(name: String, value: String)], selection: AWSHeaderSelection) {
        // Fields the client names in Connection are hop-by-hop too (RFC 9110 §7.6.1): dropped
        // on the way, so never signed.
        var connectionOptions: Set<String> = []
        for field in fields where field.name.lowercased() == "connection" {
            for option in field.value.split(separator: ",") {
                connectionOptions.insert(option.filter { $0 != " " && $0 != "\t" }.lowercased())   // names hold no blanks
            }
        }
        var values: [String: [String]] = [:]
        for field in fields {
            let name = field.name.lowercased()
            guard selection.covers(name, connectionOptions: connectionOptions) else { continue }
            values[name, default: []].append(Self.canonicalValue(field.value))
        }
        let names = values.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        block = names.map { "\($0):\(values[$0]!.joined(separator: ","))\n" }.joined()
        signedHeaders = names.joined(separator: ";")
    }

    static func canonicalValue(_ value: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count)
        var pendingSpace = false
        for byte in value.utf8 {
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(0x20) }
                pendingSpace = false
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

