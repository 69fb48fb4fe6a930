import CLibevent

/// The streams of one event-loop thread written during the current callback; flushed when
/// it returns, so a response head and its body leave in one `writev`.
final class FlushQueue {
    private var streams: [Stream] = []
    /// The batch being flushed; swapped with `streams` so neither array is ever reallocated.
    private var flushing: [Stream] = []
    private var isFlushing = false

    func add(_ stream: Stream) { streams.append(stream) }

    /// Flushes until nothing is queued; a stream that wrote everything is told it is
    /// writable, as libevent's write event would have.
    func flushAll() {
        // A callback run by a flush (a write error's event) may flush again: the running
        // loop takes what it queued, so no batch is flushed twice.
        guard !isFlushing else { return }
        isFlushing = true
        defer { isFlushing = false }
        while !streams.isEmpty {
            swap(&streams, &flushing)
            // By index: a for-in loop retained the array for its iterator, twice per request.
            // Each stream is used without a retain of its own: `flushing` holds it until the
            // batch is done, and only this loop changes `flushing` (a flush run from inside it
            // returns at once, and what it queues goes to `streams`).
            var index = 0
            while index < flushing.count {
                Unmanaged.passUnretained(flushing[index])._withUnsafeGuaranteedRef { stream in
                    if stream.flush() { stream.delegate?.streamWritable(stream) }
                }
                index += 1
            }
            // Popped, not `removeAll(keepingCapacity:)`: its generic destroy of the elements
            // cost ~70 instructions a batch more than releasing the one or two a batch holds.
            while flushing.popLast() != nil {}
        }
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// This thread's queue, if it runs an event loop.
    static var current: FlushQueue? {
        pthread_getspecific(key).map { Unmanaged<FlushQueue>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Gives the calling thread a queue for as long as it lives.
    static func installForCurrentThread() {
        guard current == nil else { return }
        pthread_setspecific(key, Unmanaged.passRetained(FlushQueue()).toOpaque())
    }
}
