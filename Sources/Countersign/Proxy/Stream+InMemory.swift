import CLibevent

/// What fills an in-memory stream's input and takes its output (an HTTP/2 stream's bridge).
protocol InMemoryStreamPeer: AnyObject {
    /// The stream's owner wrote to the output, or read the input while the peer waits for that,
    /// in the callback that just ended: the peer takes what it can and notes what was read.
    /// Returns whether room opened in the output (the owner then hears `streamWritable`, as it
    /// does when a socket's output drains).
    func streamTouched() -> Bool
}

/// The two buffers of an in-memory stream (`Stream(memory:)`), which its owner (a
/// `ClientConnection` and its exchange) reads and writes as it would a socket's, while its peer
/// moves octets in and out of them in place. No bufferevent and no event per write: the peer
/// hands input over with `Stream.inMemoryReceived`, and the owner's writes reach the peer when
/// its callback ends (the flush queue). The idle timeouts the owner sets are kept by one timer,
/// armed only while one can fire: input awaited, or output the peer cannot take.
final class InMemoryEnds {
    let input: OwnedEventBuffer
    let output: OwnedEventBuffer
    /// The peer owns these buffers (and outlives the stream's use of them).
    unowned(unsafe) var peer: InMemoryStreamPeer?
    /// Whether the owner reads (a read timeout stops reading, as a bufferevent's does).
    private(set) var reading = false
    /// The peer waits to hear that the input was read (to give a client's window back).
    var awaitsRead = false
    /// Whether more input may come (a request body not ended yet): only then can reading time out.
    var expectsInput = true
    private var timeouts: (read: Double?, write: Double?) = (nil, nil)
    private var lastInput = 0.0
    /// Since when the peer has been unable to take the output (nil while it keeps up).
    private var outputStalledSince: Double?
    private let base: OpaquePointer
    private var timer: Timer?
    private var timerArmed = false
    /// The stream these are the buffers of, told of a timeout; nil once it closed.
    fileprivate unowned(unsafe) var stream: Stream?

    init?(base: OpaquePointer) {
        guard let input = OwnedEventBuffer(), let output = OwnedEventBuffer() else { return nil }
        (self.input, self.output, self.base) = (input, output, base)
    }

    /// As new, for another stream (its stream closed): buffers emptied, nothing watched.
    func reset() {
        input.buffer.drainAll()
        output.buffer.drainAll()
        close()
        peer = nil
        (awaitsRead, expectsInput, timeouts, outputStalledSince) = (false, true, (nil, nil), nil)
    }

    func setReading(_ on: Bool) {
        reading = on
        guard on, expectsInput, timeouts.read != nil else { return }
        lastInput = MonotonicClock.now()
        watch()
    }

    func setTimeouts(read: Double?, write: Double?) { timeouts = (read, write) }

    func restartReadTimeout() {
        if reading { setReading(true) }
    }

    /// The peer added input.
    fileprivate func received() {
        guard expectsInput, timeouts.read != nil else { return }
        lastInput = MonotonicClock.now()
        watch()
    }

    /// The peer took what it could of the output: `stalled` when what is left waits for it
    /// (an HTTP/2 window), not for more octets from the owner; `progressed` when it took some.
    func outputWaits(stalled: Bool, progressed: Bool) {
        guard stalled else { return outputStalledSince = nil }
        guard progressed || outputStalledSince == nil, timeouts.write != nil else { return }
        outputStalledSince = MonotonicClock.now()
        watch()
    }

    /// The stream closed: the peer may still take what it wrote.
    func close() {
        stream = nil
        reading = false
        if timerArmed { timer?.cancel() }
        timerArmed = false
    }

    // MARK: - Timeouts

    private var nextTimeout: (at: Double, reading: Bool)? {
        var due: (at: Double, reading: Bool)?
        if reading, expectsInput, let read = timeouts.read { due = (lastInput + read, true) }
        if let since = outputStalledSince, let write = timeouts.write, since + write < due?.at ?? .infinity { due = (since + write, false) }
        return due
    }

    private func watch() {
        guard !timerArmed, let due = nextTimeout else { return }
        arm(for: due.at, now: MonotonicClock.now())
    }

    private func arm(for time: Double, now: Double) {
        if timer == nil { timer = Timer(base: base) { [unowned self] in self.timerFired() } }
        timerArmed = true
        timer?.arm(seconds: max(time - now, 0))
    }

    private func timerFired() {
        timerArmed = false
        guard let due = nextTimeout, let stream else { return }
        let now = MonotonicClock.now()
        // Libevent waits in whole milliseconds from the time it cached for this loop iteration.
        if due.at - now > 0.001 { return arm(for: due.at, now: now) }
        if due.reading { reading = false } else { outputStalledSince = nil }
        let direction = due.reading ? BEV_EVENT_READING : BEV_EVENT_WRITING
        stream.delegate?.stream(stream, event: StreamEvent(flags: Int16(BEV_EVENT_TIMEOUT | direction)))
    }
}

extension Stream {
    /// An in-memory stream on `ends` (its peer set already).
    static func inMemory(_ ends: InMemoryEnds) -> Stream {
        let stream = Stream(memory: ends)
        ends.stream = stream
        return stream
    }

    /// The input of an in-memory stream; reading it while its peer waits to hear of that
    /// brings the peer in when the callback ends.
    func inMemoryInput(_ memory: InMemoryEnds) -> EventBuffer {
        if memory.awaitsRead { scheduleFlush() }
        return memory.input.buffer
    }

    /// The peer added input: the owner reads it now, if it reads.
    func inMemoryReceived() {
        guard let memory else { return }
        memory.received()
        if memory.reading { delegate?.streamReadable(self) }
    }

    /// The peer took output outside a flush (a window opened): the owner may write more.
    func inMemoryRoomOpened() {
        guard memory != nil else { return }
        delegate?.streamWritable(self)
    }
}
