import CountersignHTTP

extension Stream {
    /// Adds `bytes` to the output without asking for a flush: the caller flushes later
    /// (`scheduleFlush`), so what several callbacks write leaves in one write, not one each.
    func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { outputWithoutFlush?.add($0) }
    }

    /// A forwarded head, written straight into the output (`EventBuffer.add(_:)`).
    func write(_ head: ForwardedHead) {
        outputWithoutFlush?.add(head)
        scheduleFlush()
    }
}
