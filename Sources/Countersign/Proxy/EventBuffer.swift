import CLibevent
import CountersignHTTP

/// One libevent `evbuffer`: a bufferevent's input or output (borrowed: the bufferevent owns
/// it), or one an `OwnedEventBuffer` owns. Every evbuffer call goes through here, so bodies
/// stay where libevent put them: they are moved between buffers, copied, hashed and searched
/// in place, and only a head or a chunk-size line is pulled up into one block to be read.
struct EventBuffer: Equatable {
    /// For the few libevent calls that take an evbuffer themselves (bufferevents, not data).
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }

    var count: Int { evbuffer_get_length(pointer) }
    var isEmpty: Bool { count == 0 }

    /// Discards the first `count` bytes.
    func drain(_ count: Int) {
        evbuffer_drain(pointer, count)
    }

    func drainAll() {
        evbuffer_drain(pointer, count)
    }

    /// Moves the first `count` bytes to the end of `destination` (libevent relinks whole
    /// chains where it can instead of copying).
    func move(_ count: Int, to destination: EventBuffer) {
        evbuffer_remove_buffer(pointer, destination.pointer, count)
    }

    /// `move(_:to:)` for a caller that knows the buffer holds `held` bytes: moving all of them
    /// relinks the chains with `evbuffer_add_buffer` directly (evbuffer_remove_buffer measures
    /// and locks both buffers first, ~60 instructions, then calls it: a forwarded response's
    /// body goes whole, once a request).
    func move(_ count: Int, of held: Int, to destination: EventBuffer) {
        if count == held { return moveAll(to: destination) }
        move(count, to: destination)
    }

    /// Moves everything to the end of `destination`.
    func moveAll(to destination: EventBuffer) {
        evbuffer_add_buffer(destination.pointer, pointer)
    }

    /// Moves everything of `source` to the front of this buffer (a held body put back ahead of
    /// what the client sent after it).
    func prependAll(from source: EventBuffer) {
        evbuffer_prepend_buffer(pointer, source.pointer)
    }

    /// Appends a copy of everything to `destination`; this buffer keeps its bytes.
    func copyAll(to destination: EventBuffer) {
        forEachSegment { evbuffer_add(destination.pointer, $0.baseAddress, $0.count) }
    }

    func add(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        evbuffer_add(pointer, base, bytes.count)
    }

    /// Writes `head` straight into the buffer's free space, reserved for its bound and
    /// committed for what it took: the head is not built elsewhere and copied in.
    func add(_ head: ForwardedHead) {
        var vector = iovec()
        guard evbuffer_reserve_space(pointer, head.byteBound, &vector, 1) >= 1, let base = vector.iov_base else { return }
        var writer = HeadWriter(UnsafeMutableRawBufferPointer(start: base, count: head.byteBound))
        head.write(to: &writer)
        vector.iov_len = writer.count
        evbuffer_commit_space(pointer, &vector, 1)
    }

    func add(_ text: String) {
        var text = text
        text.withUTF8 { add(UnsafeRawBufferPointer($0)) }
    }

    /// The first `count` bytes as one contiguous block (libevent linearises them if needed),
    /// valid until the buffer next changes; nil when fewer bytes are held.
    func pullUp(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        guard let bytes = evbuffer_pullup(pointer, count) else { return nil }
        return UnsafeRawBufferPointer(start: bytes, count: count)
    }

    /// Hands what the buffer holds to `consume` in contiguous slices of at most `slice` bytes,
    /// for as long as `more()` holds; each slice is drained before `then` acts on what `consume`
    /// made of it, since acting may close whatever owns this buffer (an HTTP/2 connection's bytes
    /// go to its machine this way, from either leg).
    func consumeSlices<Made>(of slice: Int = 64 * 1024, while more: () -> Bool,
                             _ consume: (UnsafeRawBufferPointer) -> Made, then act: (Made) -> Void) {
        while count > 0, more() {
            let size = min(count, slice)
            guard let bytes = pullUp(size) else { return }
            let made = consume(bytes)
            drain(size)
            act(made)
        }
    }

    /// The length of the first CRLF-terminated line, without the CRLF; nil until a CRLF is held.
    func lineLength() -> Int? {
        var eolLength = 0
        let found = evbuffer_search_eol(pointer, nil, &eolLength, EVBUFFER_EOL_CRLF_STRICT)
        return found.pos < 0 ? nil : Int(found.pos)
    }

    /// Calls `body` with each stored segment, in order, without copying.
    func forEachSegment(_ body: (UnsafeRawBufferPointer) -> Void) {
        let segments = Int(evbuffer_peek(pointer, -1, nil, nil, 0))
        guard segments > 0 else { return }
        withUnsafeTemporaryAllocation(of: iovec.self, capacity: segments) { vectors in
            let filled = Int(evbuffer_peek(pointer, -1, nil, vectors.baseAddress, Int32(segments)))
            for vector in vectors.prefix(min(filled, segments)) where vector.iov_len > 0 {
                body(UnsafeRawBufferPointer(start: vector.iov_base, count: vector.iov_len))
            }
        }
    }

    /// Calls `body` with each stored segment from byte `offset` on, in order, without copying,
    /// until it returns true; returns whether it did.
    @discardableResult
    func forEachSegment(from offset: Int, _ body: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        let batch = 8
        return withUnsafeTemporaryAllocation(of: iovec.self, capacity: batch) { vectors -> Bool in
            var position = offset
            while position < count {
                var start = evbuffer_ptr()
                guard evbuffer_ptr_set(pointer, &start, position, EVBUFFER_PTR_SET) == 0 else { return false }
                let filled = Int(evbuffer_peek(pointer, -1, &start, vectors.baseAddress, Int32(batch)))
                guard filled > 0 else { return false }
                let before = position
                for vector in vectors.prefix(min(filled, batch)) where vector.iov_len > 0 {
                    if body(UnsafeRawBufferPointer(start: vector.iov_base, count: vector.iov_len)) { return true }
                    position += vector.iov_len
                }
                guard position > before else { return false }
            }
            return false
        }
    }

    /// Takes every byte out into an array: only for small messages read whole (a token
    /// endpoint's JSON), never for a body being relayed.
    func removeAll() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let taken = bytes.withUnsafeMutableBytes { evbuffer_remove(pointer, $0.baseAddress, $0.count) }
        return taken < 0 ? [] : Array(bytes.prefix(Int(taken)))
    }

    /// Writes as much as the socket takes (one writev: on this kernel no cheaper call writes
    /// two vectors, `bench/syscall_cost.c`) and drains it: bytes written, or -1 with errno.
    func write(to fd: Int32) -> Int {
        Int(evbuffer_write(pointer, fd))
    }

    /// A bufferevent freezes the start of its output so only it drains it; these lift and
    /// restore that around a write (or a take-over) of our own.
    func unfreezeStart() { evbuffer_unfreeze(pointer, 1) }
    func freezeStart() { evbuffer_freeze(pointer, 1) }
}

/// An evbuffer of our own (not a bufferevent's), freed with its owner.
final class OwnedEventBuffer {
    let buffer: EventBuffer

    /// Nil only when libevent cannot allocate.
    init?() {
        guard let pointer = evbuffer_new() else { return nil }
        buffer = EventBuffer(pointer)
    }

    deinit { evbuffer_free(buffer.pointer) }
}
