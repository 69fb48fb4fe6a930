public enum LogSeverity: Int, Comparable, Sendable {
    case debug, info, warn, error

    public var name: String {
        switch self {
        case .debug: return "debug"
        case .info: return "info"
        case .warn: return "warn"
        case .error: return "error"
        }
    }

    public static func < (a: LogSeverity, b: LogSeverity) -> Bool { a.rawValue < b.rawValue }
}
