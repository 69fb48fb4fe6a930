/// A signing key printed, debug-printed or dumped by accident (a log line, an error body) names
/// its algorithm and kind only: the default mirror showed every byte of an HMAC secret.
extension MessageSigningKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "MessageSigningKey(\(algorithm.rawValue), \(material))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["algorithm": algorithm.rawValue], displayStyle: .struct) }
}

extension MessageSigningKey.Material: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        switch self {
        case .shared: return "shared secret redacted"
        case .privateKey(let key, _): return "\(key)"
        }
    }

    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .enum) }
}
