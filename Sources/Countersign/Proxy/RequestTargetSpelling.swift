/// How a client spelled its request target, for `Routing`.
extension Routing {
    /// Whether an absolute-form target wrote its port (`http://h:80/` vs `http://h/`).
    static func hasExplicitPort(_ target: String) -> Bool {
        // On UTF-8 bytes: this runs for every absolute-form request.
        let bytes = target.utf8
        guard let schemeEnd = bytes.firstIndex(of: UInt8(ascii: ":")) else { return false }
        let authorityStart = bytes.index(schemeEnd, offsetBy: 3, limitedBy: bytes.endIndex) ?? bytes.endIndex
        let authority = bytes[authorityStart...].prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") }
        let afterLiteral = authority.lastIndex(of: UInt8(ascii: "]")).map { authority[$0...] } ?? authority
        return afterLiteral.contains(UInt8(ascii: ":"))
    }

    /// A gateway upstream with a base path: `https://api/v1` + `/users` = `/v1/users`.
    static func join(_ base: String, _ path: String) -> String {
        guard !base.isEmpty, base != "/" else { return path }
        let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
        return trimmed + path
    }
}
