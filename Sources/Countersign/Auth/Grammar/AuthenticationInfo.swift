import CountersignHTTP

/// `Authentication-Info` / `Proxy-Authentication-Info` (RFC 9110 §11.6.3, RFC 7616 §3.5):
/// what a Digest server says after accepting an answer.
public struct AuthenticationInfo: Equatable, Sendable {
    public var nextnonce: String?
    public var rspauth: String?
    public var qop: String?
    public var nc: String?
    public var cnonce: String?

    public init(nextnonce: String? = nil, rspauth: String? = nil, qop: String? = nil, nc: String? = nil, cnonce: String? = nil) {
        self.nextnonce = nextnonce
        self.rspauth = rspauth
        self.qop = qop
        self.nc = nc
        self.cnonce = cnonce
    }

    /// Nil when no field carries any parameter.
    /// One pass over the parameters; the first of a repeated name counts, across fields too.
    public static func parse(fieldValues: [String]) -> AuthenticationInfo? {
        var reader = Reader(wanted: .all)
        for field in fieldValues { reader.read(FieldScanner(field)) }
        return reader.info
    }

    /// The parameters a reader makes strings of; the others are read past.
    public struct Parameters: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let nextnonce = Parameters(rawValue: 1)
        public static let rspauth = Parameters(rawValue: 2)
        public static let cnonce = Parameters(rawValue: 4)
        public static let nc = Parameters(rawValue: 8)
        public static let qop = Parameters(rawValue: 16)
        public static let all: Parameters = [.nextnonce, .rspauth, .cnonce, .nc, .qop]
    }

    /// The same from a response's fields as received: read from their bytes, a `String` made
    /// only for the parameters kept, and only for those `wanted` (this runs for every answered
    /// Digest response, which needs no `qop`, nor anything but `nextnonce` without a proof to check).
    public static func parse(_ headers: HeaderFields, field name: String, wanted: Parameters = .all) -> AuthenticationInfo? {
        var reader = Reader(wanted: wanted)
        headers.forEachValue(named: name) { reader.read(FieldScanner(fieldValue: $0)) }
        return reader.info
    }

    /// A bare `#auth-param` list: malformed elements skipped, the first of each name kept.
    private struct Reader {
        let wanted: Parameters
        var found = AuthenticationInfo()
        var any = false

        init(wanted: Parameters) { self.wanted = wanted }

        var info: AuthenticationInfo? { any ? found : nil }

        mutating func read(_ field: FieldScanner) {
            var scanner = field
            while true {
                scanner.skipListSeparators()
                if scanner.atEnd { return }
                if let param = scanner.readParamSpan() {
                    scanner.skipWhitespace()
                    if scanner.atEnd || scanner.next == TokenSyntax.comma {
                        any = true
                        keep(param, from: scanner)
                        continue
                    }
                }
                scanner.skipElement()
            }
        }

        private mutating func keep(_ param: (name: Range<Int>, value: FieldScanner.ValueSpan), from scanner: FieldScanner) {
            let wanted = self.wanted
            func take(_ slot: inout String?, _ name: StaticString, _ parameter: Parameters) -> Bool {
                guard scanner.bytes(in: param.name, equal: name) else { return false }
                if slot == nil, wanted.contains(parameter) { slot = scanner.text(of: param.value) }
                return true
            }
            _ = take(&found.nextnonce, "nextnonce", .nextnonce) || take(&found.rspauth, "rspauth", .rspauth)
                || take(&found.cnonce, "cnonce", .cnonce) || take(&found.qop, "qop", .qop) || take(&found.nc, "nc", .nc)
        }
    }
}
