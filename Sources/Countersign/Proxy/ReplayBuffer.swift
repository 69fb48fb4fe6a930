import CEventSSL

/// A copy of the request body as sent upstream (framing included), kept while it streams
/// so the request can be replayed with an answer to a challenge. Copies happen inside
/// libevent (peek + add); the bytes never enter Swift. Gives up past `limit`.
final class ReplayBuffer {
    private var buffer: OpaquePointer?
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
        buffer = evbuffer_new()
    }

    deinit { if let buffer { evbuffer_free(buffer) } }

    /// Whether everything sent so far is still held.
    var isComplete: Bool { buffer != nil }

    /// Copies `source`'s contents; stops keeping (and frees) the copy when it grows past the limit.
    func keepCopy(of source: OpaquePointer) {
        guard let buffer else { return }
        let length = evbuffer_get_length(source)
        guard evbuffer_get_length(buffer) + length <= limit else {
            evbuffer_free(buffer)
            self.buffer = nil
            return
        }
        Self.copy(source, into: buffer)
    }

    /// Appends a copy of what is held to `destination` (the held copy stays for another round).
    func replay(into destination: OpaquePointer) {
        guard let buffer else { return }
        Self.copy(buffer, into: destination)
    }

    private static func copy(_ source: OpaquePointer, into destination: OpaquePointer) {
        let count = evbuffer_peek(source, -1, nil, nil, 0)
        guard count > 0 else { return }
        var vectors = [iovec](repeating: iovec(), count: Int(count))
        _ = evbuffer_peek(source, -1, nil, &vectors, count)
        for vector in vectors where vector.iov_len > 0 {
            evbuffer_add(destination, vector.iov_base, vector.iov_len)
        }
    }
}
