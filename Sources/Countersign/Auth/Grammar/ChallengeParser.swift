import CountersignHTTP

/// Parses `WWW-Authenticate` / `Proxy-Authenticate` field values into challenges (RFC 9110 §11.6.1).
///
/// Commas separate both challenges and their parameters, so after each parameter the parser looks
/// ahead: `name =` continues the current challenge, anything else starts the next one. A malformed
/// challenge is dropped whole (a half-read challenge could be answered wrongly) and parsing resumes
/// at the next list element that reads as a scheme.
public enum ChallengeParser {
    public static func parse(fieldValues: [String]) -> [Challenge] {
        fieldValues.flatMap { parse(fieldValue: $0) }
    }

    public static func parse(fieldValue: String) -> [Challenge] {
        var scanner = FieldScanner(fieldValue)
        var challenges: [Challenge] = []
        while true {
            scanner.skipListSeparators()
            if scanner.atEnd { break }
            if let challenge = readChallenge(&scanner) {
                challenges.append(challenge)
            } else {
                scanner.skipElement()
            }
        }
        return challenges
    }

    /// Reads one challenge; nil leaves the scanner inside the malformed element for the caller to skip.
    private static func readChallenge(_ scanner: inout FieldScanner) -> Challenge? {
        guard let scheme = scanner.readToken() else { return nil }
        let spaces = scanner.skipWhitespace()
        if scanner.atEnd || scanner.next == TokenSyntax.comma { return Challenge(scheme: scheme) }
        guard spaces > 0 else { return nil }
        if let token68 = scanner.readToken68() { return Challenge(scheme: scheme, token68: token68) }

        var params: [(name: String, value: String)] = []
        var seen = Set<String>()
        while true {
            guard let param = scanner.readParam() else { return nil }
            // A repeated name makes the challenge ambiguous (RFC 9110 §11.2: each name once).
            guard isFirst(param.name, among: params, seen: &seen) else { return nil }
            params.append(param)
            scanner.skipWhitespace()
            if scanner.atEnd { break }
            guard scanner.next == TokenSyntax.comma else { return nil }
            var lookahead = scanner
            lookahead.skipListSeparators()
            if lookahead.atEnd || !lookahead.nextLooksLikeParam() { break }
            scanner = lookahead
        }
        return Challenge(scheme: scheme, params: params)
    }

    /// Whether no earlier parameter has this name, ignoring case. A few names are compared in
    /// place (no lower-cased copy each); past that, through `seen`, filled once.
    private static func isFirst(_ name: String, among params: [(name: String, value: String)], seen: inout Set<String>) -> Bool {
        if params.count < 16 { return !params.contains { ASCIICase.equal($0.name, name) } }
        if seen.isEmpty { seen = Set(params.map { TokenSyntax.lowercased($0.name) }) }
        return seen.insert(TokenSyntax.lowercased(name)).inserted
    }
}
