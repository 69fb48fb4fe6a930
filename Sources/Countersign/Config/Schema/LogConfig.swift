import CountersignLog

/// Log levels and formats are the logger's own types, so the proxy passes them straight through.
public typealias LogLevel = LogSeverity
public typealias LogFormat = Logger.Format

public struct LogConfig: Sendable {
    public var level: LogLevel
    public var format: LogFormat
    /// One access line per exchange.
    public var access: Bool

    public init(level: LogLevel = .info, format: LogFormat = .json, access: Bool = true) {
        self.level = level
        self.format = format
        self.access = access
    }
}
