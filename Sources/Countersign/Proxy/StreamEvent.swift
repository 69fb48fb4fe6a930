import CLibevent

/// What a connection does when its bufferevent has news.
protocol StreamDelegate: AnyObject {
    func streamReadable(_ stream: Stream)
    func streamWritable(_ stream: Stream)
    func stream(_ stream: Stream, event: StreamEvent)
}

/// The events libevent reports, decoded once.
struct StreamEvent: CustomStringConvertible {
    let flags: Int16

    var connected: Bool { flags & Int16(BEV_EVENT_CONNECTED) != 0 }
    var eof: Bool { flags & Int16(BEV_EVENT_EOF) != 0 }
    var error: Bool { flags & Int16(BEV_EVENT_ERROR) != 0 }
    var timeout: Bool { flags & Int16(BEV_EVENT_TIMEOUT) != 0 }
    var reading: Bool { flags & Int16(BEV_EVENT_READING) != 0 }
    var writing: Bool { flags & Int16(BEV_EVENT_WRITING) != 0 }

    var description: String {
        [connected ? "connected" : nil, eof ? "eof" : nil, error ? "error" : nil, timeout ? "timeout" : nil]
            .compactMap { $0 }.joined(separator: ",")
    }
}
