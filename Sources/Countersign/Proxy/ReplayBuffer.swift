import CountersignAuth
import CountersignSupport

/// A copy of the request body as sent upstream (framing included), kept while it streams
/// so the request can be replayed with an answer to a challenge. Copies happen inside
/// libevent (peek + add); the bytes never enter Swift. Gives up past `limit`.
final class ReplayBuffer {
    private var held: OwnedEventBuffer?
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
        held = OwnedEventBuffer()
    }

    /// Whether everything sent so far is still held.
    var isComplete: Bool { held != nil }

    /// Copies `source`'s contents; stops keeping (and frees) the copy when it grows past the limit.
    func keepCopy(of source: EventBuffer) {
        guard let buffer = held?.buffer else { return }
        guard buffer.count + source.count <= limit else {
            held = nil
            return
        }
        source.copyAll(to: buffer)
    }

    /// Appends a copy of what is held to `destination` (the held copy stays for another round).
    func replay(into destination: EventBuffer) {
        held?.buffer.copyAll(to: destination)
    }

    /// Digests of what is held, for Digest `qop=auth-int` (only meaningful when the body was
    /// sent with Content-Length, so the copy is exactly the payload).
    func digests(_ functions: [HashFunction]) -> [HashFunction: String]? {
        guard let buffer = held?.buffer else { return nil }
        let digests = functions.map { MessageDigest($0) }
        buffer.forEachSegment { segment in
            for digest in digests { digest.update(segment) }
        }
        var result: [HashFunction: String] = [:]
        for digest in digests { result[digest.function] = Hex.encode(digest.finish()) }
        return result
    }
}
