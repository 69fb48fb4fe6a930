/// The keys a SigV4 signature is made with. The secret is bytes, never a `String` that could be
/// interpolated into a log line; `description`, `debugPrint` and `dump` name the access key only.
public struct AWSCredentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let accessKeyID: String
    let secretAccessKey: [UInt8]
    /// A temporary credential's token (`X-Amz-Security-Token`); nil for long-term keys.
    public let sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: [UInt8], sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.init(accessKeyID: accessKeyID, secretAccessKey: Array(secretAccessKey.utf8), sessionToken: sessionToken)
    }

    public var description: String { "AWSCredentials(\(accessKeyID), secret and token redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["accessKeyID": accessKeyID], displayStyle: .struct) }
}
