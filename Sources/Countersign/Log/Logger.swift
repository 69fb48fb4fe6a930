#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CountersignSupport

/// JSON lines (or `key=value` text) on stderr, one `write(2)` per line so lines from
/// several worker threads never interleave. Configuration can change on reload.
public final class Logger: @unchecked Sendable {
    public enum Format: Sendable { case json, text }

    public static let shared = Logger()

    /// Serialises reconfiguration; the hot path reads the settings without it.
    private let lock = Mutex(())
    private var minimum: LogSeverity = .info
    private var format: Format = .json
    private var accessEnabled = true
    private let fd: Int32

    public init(fd: Int32 = 2) {
        self.fd = fd
    }

    public func configure(level: LogSeverity, format: Format, access: Bool) {
        lock.withLock { _ in
            minimum = level
            self.format = format
            accessEnabled = access
        }
    }

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
        // Built as bytes, not a String: one access line per exchange is on the hot path.
        var line = [UInt8]()
        line.reserveCapacity(256)
        switch format {
        case .json:
            line.append(contentsOf: #"{"time":""#.utf8)
            Self.appendTimestamp(to: &line)
            line.append(contentsOf: #"","level":""#.utf8)
            line.append(contentsOf: severity.name.utf8)
            line.append(contentsOf: #"","msg":"#.utf8)
            JSONText.appendQuoted(message, to: &line)
            for (key, value) in fields {
                line.append(UInt8(ascii: ","))
                JSONText.appendQuoted(key, to: &line)
                line.append(UInt8(ascii: ":"))
                value.appendJSON(to: &line)
            }
            line.append(contentsOf: "}\n".utf8)
        case .text:
            Self.appendTimestamp(to: &line)
            line.append(contentsOf: " \(severity.name) \(message)".utf8)
            for (key, value) in fields { line.append(contentsOf: " \(key)=\(value.plain)".utf8) }
            line.append(UInt8(ascii: "\n"))
        }
        let count = line.count
        line.withUnsafeBytes { buffer in
            var offset = 0
            while offset < count {
                let written = write(fd, buffer.baseAddress! + offset, count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
    }

    /// RFC 3339 UTC with milliseconds, without Foundation's formatter on the hot path.
    static func appendTimestamp(to out: inout [UInt8]) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = time_t(now.tv_sec)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4)
        out.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2)
        out.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2)
        out.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2)
        out.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2)
        out.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2)
        out.append(UInt8(ascii: "."))
        digits(Int(now.tv_nsec / 1_000_000), 3)
        out.append(UInt8(ascii: "Z"))
    }
}
