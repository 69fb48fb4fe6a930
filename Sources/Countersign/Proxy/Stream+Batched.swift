import CLibevent

extension Stream {
    /// Adds `bytes` to the output without asking for a flush: the caller flushes later
    /// (`scheduleFlush`), so what several callbacks write leaves in one write, not one each.
    func append(_ bytes: [UInt8]) {
        guard let bev else { return }
        bytes.withUnsafeBytes { _ = bufferevent_write(bev, $0.baseAddress, $0.count) }
    }
}
