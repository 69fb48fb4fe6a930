import COpenSSL

/// HMAC-SHA256 under one fixed key, set up once (`hmac_sha256.c`): the key's padded blocks are
/// hashed when the key is read, and a message then costs its own compressions and little else.
/// OpenSSL's one-shot `HMAC()` schedules the key on every call and `EVP_MAC` duplicates a
/// provider context per message; either was most of an `hmac-sha256` signature's cost. The
/// state is only read after `init`, so one instance serves every worker thread.
public final class KeyedHMACSHA256: @unchecked Sendable {
    private let state: OpaquePointer

    public init?(key: [UInt8]) {
        guard let state = key.withUnsafeBufferPointer({ cs_hmac_sha256_new($0.baseAddress, $0.count) }) else { return nil }
        self.state = state
    }

    deinit { cs_hmac_sha256_free(state) }

    /// Writes the 32-byte MAC of `message` to `output`.
    public func authenticate(_ message: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>) {
        cs_hmac_sha256_mac(state, message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count, output)
    }

    public func authenticate(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { buffer, count in
            authenticate(message, into: buffer.baseAddress!)
            count = 32
        }
    }

    public func authenticate(_ message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { authenticate($0) }
    }
}
