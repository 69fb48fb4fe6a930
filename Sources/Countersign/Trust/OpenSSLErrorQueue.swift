import CEventSSL

/// Reads (and empties) the calling thread's OpenSSL error queue.
enum OpenSSLErrorQueue {
    /// One entry per queued error: the packed code and OpenSSL's reason text.
    struct Entry: Equatable {
        let code: UInt
        let library: Int32
        let reason: Int32
        let text: String
    }

    static func drain() -> [Entry] {
        var entries: [Entry] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            let text = ERR_reason_error_string(code).map { String(cString: $0) } ?? "error \(code)"
            entries.append(Entry(code: code, library: ERR_GET_LIB(code), reason: ERR_GET_REASON(code), text: text))
        }
        return entries
    }

    static func drainReasons() -> [String] {
        var seen: [String] = []
        for entry in drain() where !seen.contains(entry.text) {
            seen.append(entry.text)
        }
        return seen
    }

    static func clear() {
        ERR_clear_error()
    }
}
