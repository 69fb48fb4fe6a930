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
        var reader = Reader()
        var info = AuthenticationInfo()
        for field in fieldValues { reader.read(FieldScanner(field)) { info.keep($0, $1.text(of: $2)) } }
        return reader.any ? info : nil
    }

    /// The parameters known; the others are read past.
    public struct Parameters: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let nextnonce = Parameters(rawValue: 1)
        public static let rspauth = Parameters(rawValue: 2)
        public static let cnonce = Parameters(rawValue: 4)
        public static let nc = Parameters(rawValue: 8)
        public static let qop = Parameters(rawValue: 16)
    }

    /// The same from a response's fields as received, read from their bytes (`DigestReply`
    /// reads them without making strings).
    public static func parse(_ headers: HeaderFields, field name: FieldName) -> AuthenticationInfo? {
        var info = AuthenticationInfo()
        let any = forEachParameter(headers, field: name) { info.keep($0, $1.text(of: $2)) }
        return any ? info : nil
    }

    /// Each known parameter of the fields `name`, the first of each name only, with the scanner
    /// and where its value lies (nothing made of it); true when any field carried a parameter.
    static func forEachParameter(_ headers: HeaderFields, field name: FieldName,
                                 _ visit: (Parameters, FieldScanner, FieldScanner.ValueSpan) -> Void) -> Bool {
        var reader = Reader()
        headers.forEachValue(name) { reader.read(FieldScanner(fieldValue: $0), visit) }
        return reader.any
    }

    private mutating func keep(_ parameter: Parameters, _ value: String) {
        switch parameter {
        case .nextnonce: nextnonce = value
        case .rspauth: rspauth = value
        case .cnonce: cnonce = value
        case .nc: nc = value
        default: qop = value
        }
    }

    /// A bare `#auth-param` list: malformed elements skipped, the first of each name kept.
    private struct Reader {
        var seen: Parameters = []
        var any = false

        mutating func read(_ field: FieldScanner, _ visit: (Parameters, FieldScanner, FieldScanner.ValueSpan) -> Void) {
            var scanner = field
            while true {
                scanner.skipListSeparators()
                if scanner.atEnd { return }
                if let param = scanner.readParamSpan() {
                    scanner.skipWhitespace()
                    if scanner.atEnd || scanner.next == TokenSyntax.comma {
                        any = true
                        if let parameter = Self.parameter(named: param.name, in: scanner), !seen.contains(parameter) {
                            seen.insert(parameter)
                            visit(parameter, scanner, param.value)
                        }
                        continue
                    }
                }
                scanner.skipElement()
            }
        }

        private static func parameter(named name: Range<Int>, in scanner: FieldScanner) -> Parameters? {
            if scanner.bytes(in: name, equal: "nextnonce") { return .nextnonce }
            if scanner.bytes(in: name, equal: "rspauth") { return .rspauth }
            if scanner.bytes(in: name, equal: "cnonce") { return .cnonce }
            if scanner.bytes(in: name, equal: "qop") { return .qop }
            if scanner.bytes(in: name, equal: "nc") { return .nc }
            return nil
        }
    }
}
