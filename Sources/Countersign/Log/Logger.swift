#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// JSON lines (or `key=value` text) on stderr, one `write(2)` per line so lines from
/// several worker threads never interleave. Configuration can change on reload.
public final class Logger: @unchecked Sendable {
    public enum Format: Sendable { case json, text }

    public static let shared = Logger()

    private var lock = pthread_mutex_t()
    private var minimum: LogSeverity = .info
    private var format: Format = .json
    private var accessEnabled = true
    private let fd: Int32

    public init(fd: Int32 = 2) {
        self.fd = fd
        pthread_mutex_init(&lock, nil)
    }

    public func configure(level: LogSeverity, format: Format, access: Bool) {
        pthread_mutex_lock(&lock)
        minimum = level
        self.format = format
        accessEnabled = access
        pthread_mutex_unlock(&lock)
    }

    public func isEnabled(_ severity: LogSeverity) -> Bool { severity >= minimum }
    public var accessLogEnabled: Bool { accessEnabled }

    public func debug(_ message: String, _ fields: [(String, LogValue)] = []) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: [(String, LogValue)] = []) { log(.info, message, fields) }
    public func warn(_ message: String, _ fields: [(String, LogValue)] = []) { log(.warn, message, fields) }
    public func error(_ message: String, _ fields: [(String, LogValue)] = []) { log(.error, message, fields) }

    /// One access line per exchange (the SPEC's fields are chosen by the caller).
    public func access(_ fields: [(String, LogValue)]) {
        guard accessEnabled else { return }
        emit(.info, "access", fields)
    }

    public func log(_ severity: LogSeverity, _ message: String, _ fields: [(String, LogValue)]) {
        guard severity >= minimum else { return }
        emit(severity, message, fields)
    }

    private func emit(_ severity: LogSeverity, _ message: String, _ fields: [(String, LogValue)]) {
        var line = ""
        line.reserveCapacity(160)
        let time = Self.timestamp()
        switch format {
        case .json:
            line += "{\"time\":\"\(time)\",\"level\":\"\(severity.name)\",\"msg\":"
            JSONText.appendQuoted(message, to: &line)
            for (key, value) in fields {
                line += ","
                JSONText.appendQuoted(key, to: &line)
                line += ":"
                value.appendJSON(to: &line)
            }
            line += "}\n"
        case .text:
            line += "\(time) \(severity.name) \(message)"
            for (key, value) in fields { line += " \(key)=\(value.plain)" }
            line += "\n"
        }
        var bytes = Array(line.utf8)
        let count = bytes.count
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < count {
                let written = write(fd, buffer.baseAddress! + offset, count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
    }

    /// RFC 3339 UTC with milliseconds, without Foundation's formatter on the hot path.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = time_t(now.tv_sec)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = Int(now.tv_nsec / 1_000_000)
        let millisText = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(millisText)Z"
    }
}
