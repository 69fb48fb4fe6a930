import COpenSSL
import CountersignSupport

/// Unpredictable bytes from OpenSSL's generator. Small requests (nonces, client challenges: one
/// or more per signed or Digest-answered request) are served from a pool filled 4 KiB at a time:
/// each `RAND_bytes` call takes the generator's lock and reseed checks, which cost as much as
/// the rest of an `hmac-sha256` signature. Bytes handed out are wiped from the pool.
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(buffer)
            initialized = count
        }
    }

    /// Fills `buffer` with unpredictable bytes.
    public static func fill(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        guard buffer.count > 0 else { return }
        if buffer.count > RandomPool.largestServed {
            generate(buffer)
        } else {
            RandomPool.shared.take(into: buffer)
        }
    }

    static func generate(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        guard RAND_bytes(buffer.baseAddress, Int32(buffer.count)) == 1 else {
            preconditionFailure("OpenSSL's random generator failed; refusing to continue with predictable nonces")
        }
    }
}

/// The pool behind `SecureRandom`'s small requests, shared by every worker under one short lock.
private final class RandomPool: Sendable {
    static let shared = RandomPool()
    static let size = 4096
    static let largestServed = 256

    private struct Stock: ~Copyable {
        let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: RandomPool.size)
        /// Bytes before `next` were handed out (and wiped).
        var next = RandomPool.size
    }

    private let stock = Mutex(Stock())

    func take(into output: UnsafeMutableBufferPointer<UInt8>) {
        stock.withLock { stock in
            if stock.next + output.count > Self.size {
                SecureRandom.generate(stock.bytes)
                stock.next = 0
            }
            let taken = UnsafeMutableBufferPointer(rebasing: stock.bytes[stock.next..<(stock.next + output.count)])
            _ = output.initialize(fromContentsOf: taken)
            taken.update(repeating: 0)
            stock.next += output.count
        }
    }
}
