import CountersignAuth
import Foundation

/// STS `AssumeRoleWithWebIdentity`, sans-I/O: the form POSTed (the call is not signed; the
/// web identity token is the proof) and the XML answer read into temporary keys. Errors name
/// STS's error code only: its message may echo the role, never the token, but nothing of the
/// answer's body beyond the code is repeated.
public enum AWSWebIdentityExchange {
    public struct Keys: Sendable {
        public let credentials: AWSCredentials
        /// Unix seconds.
        public let expiration: Int64
    }

    public static func requestBody(roleARN: String, sessionName: String, token: [UInt8], durationSeconds: Int?) -> [UInt8] {
        var form = [("Action", "AssumeRoleWithWebIdentity"), ("Version", "2011-06-15"), ("RoleArn", roleARN),
                    ("RoleSessionName", sessionName), ("WebIdentityToken", String(decoding: token, as: UTF8.self))]
        if let durationSeconds { form.append(("DurationSeconds", String(durationSeconds))) }
        return Array(FormURLEncoding.encode(form).utf8)
    }

    public static func headerFields(bodyLength: Int) -> [(name: String, value: String)] {
        [("Content-Type", "application/x-www-form-urlencoded; charset=utf-8"), ("Accept", "application/xml"),
         ("Content-Length", String(bodyLength))]
    }

    public static func parse(status: Int, body: [UInt8]) throws -> Keys {
        let text = String(decoding: body, as: UTF8.self)
        guard status == 200 else {
            let code = element("Code", in: text).map { $0.utf8.count <= 64 && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "." } ? $0 : "?" }
            throw AWSSigningError.stsRefused("STS answered \(status)" + (code.map { " \($0)" } ?? ""))
        }
        guard let accessKeyID = element("AccessKeyId", in: text), let secret = element("SecretAccessKey", in: text),
              let token = element("SessionToken", in: text), let expirationText = element("Expiration", in: text) else {
            throw AWSSigningError.stsRefused("its answer lacks AccessKeyId, SecretAccessKey, SessionToken or Expiration")
        }
        guard let expiration = timestamp(expirationText) else { throw AWSSigningError.stsRefused("its Expiration is not an ISO 8601 time") }
        for value in [accessKeyID, token] where value.isEmpty || value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw AWSSigningError.stsRefused("its answer holds an access key id or session token that cannot go in a header")
        }
        return Keys(credentials: AWSCredentials(accessKeyID: accessKeyID, secretAccessKey: secret, sessionToken: token), expiration: expiration)
    }

    /// The text of the first `<name>…</name>`, entities decoded (STS's keys hold none but `/+=`).
    static func element(_ name: String, in text: String) -> String? {
        guard let open = text.range(of: "<\(name)>"), let close = text.range(of: "</\(name)>", range: open.upperBound..<text.endIndex) else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `2026-11-26T21:14:35Z`, with or without fractional seconds.
    static func timestamp(_ text: String) -> Int64? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return Int64(date.timeIntervalSince1970) }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text).map { Int64($0.timeIntervalSince1970) }
    }
}
