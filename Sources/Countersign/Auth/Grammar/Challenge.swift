/// One challenge from a `WWW-Authenticate` or `Proxy-Authenticate` field (RFC 9110 §11.3):
/// a scheme, then either a token68 or a list of parameters.
public struct Challenge: Sendable, CustomStringConvertible {
    /// The scheme as the server spelled it; compare with `hasScheme`.
    public var scheme: String
    public var token68: String?
    /// Parameters in the order sent, names as sent, values unquoted and unescaped.
    public var params: [(name: String, value: String)]

    public init(scheme: String, token68: String? = nil, params: [(name: String, value: String)] = []) {
        self.scheme = scheme
        self.token68 = token68
        self.params = params
    }

    /// Schemes are case-insensitive (RFC 9110 §11.1).
    public func hasScheme(_ name: String) -> Bool {
        TokenSyntax.equalsIgnoringCase(scheme, name)
    }

    /// The value of a parameter, looked up case-insensitively (RFC 9110 §11.2).
    public subscript(param name: String) -> String? {
        let wanted = TokenSyntax.lowercased(name)
        return params.first { TokenSyntax.lowercased($0.name) == wanted }?.value
    }

    /// The realm parameter, which scopes a protection space.
    public var realm: String? { self[param: "realm"] }

    public var description: String {
        if let token68 { return "\(scheme) <token68 of \(token68.utf8.count) bytes>" }
        return "\(scheme) " + params.map { "\($0.name)" }.joined(separator: ", ")
    }
}

extension Challenge: Equatable {
    public static func == (lhs: Challenge, rhs: Challenge) -> Bool {
        lhs.scheme == rhs.scheme && lhs.token68 == rhs.token68 && lhs.params.count == rhs.params.count
            && zip(lhs.params, rhs.params).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}
