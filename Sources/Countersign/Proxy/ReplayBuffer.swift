import CEventSSL
import CountersignAuth
import CountersignSupport

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

    /// Digests of what is held, for Digest `qop=auth-int` (only meaningful when the body was
    /// sent with Content-Length, so the copy is exactly the payload).
    func digests(_ functions: [HashFunction]) -> [HashFunction: String]? {
        guard let buffer else { return nil }
        let digests = functions.map { MessageDigest($0) }
        let count = evbuffer_peek(buffer, -1, nil, nil, 0)
        if count > 0 {
            var vectors = [iovec](repeating: iovec(), count: Int(count))
            _ = evbuffer_peek(buffer, -1, nil, &vectors, count)
            for vector in vectors where vector.iov_len > 0 {
                let bytes = UnsafeRawBufferPointer(start: vector.iov_base, count: vector.iov_len)
                for digest in digests { digest.update(bytes) }
            }
        }
        var result: [HashFunction: String] = [:]
        for digest in digests { result[digest.function] = Hex.encode(digest.finish()) }
        return result
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
