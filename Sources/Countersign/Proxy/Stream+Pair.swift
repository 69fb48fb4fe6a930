import CLibevent

extension Stream {
    /// Two linked in-memory bufferevents (what one writes, the other reads), for an HTTP/2
    /// stream carried as an HTTP/1.1 connection. Callbacks are deferred to the loop, so a write
    /// on one end never runs the other end's delegate inside the writer's call.
    static func pair(base: OpaquePointer) -> (Stream, Stream)? {
        var ends: [OpaquePointer?] = [nil, nil]
        let options = Int32(BEV_OPT_CLOSE_ON_FREE.rawValue | BEV_OPT_DEFER_CALLBACKS.rawValue)
        guard bufferevent_pair_new(base, options, &ends) == 0, let first = ends[0], let second = ends[1] else { return nil }
        return (Stream(bev: first), Stream(bev: second))
    }

    /// Tells a pair's other end that nothing more will be written: freeing one end sends no end
    /// of file to the other, `BEV_FINISHED` does.
    func finishWriting() {
        _ = bev.map { bufferevent_flush($0, Int16(EV_WRITE), BEV_FINISHED) }
    }

}
