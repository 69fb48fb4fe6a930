import CountersignSupport

/// Random bytes for public nonces (Digest's cnonce), drawn from a 4 KiB block of OpenSSL's
/// CSPRNG output refilled when used up: one RAND_bytes call per 256 nonces instead of one per
/// answer (each costs about a microsecond). A cnonce is sent in the clear and only has to be
/// unpredictable before it is used, so holding the next ones in memory gives nothing away;
/// keys (NTLM's session key) still come from `SecureRandom.bytes` directly.
enum NonceBytes {
    private struct Block {
        var bytes: [UInt8] = []
        var used = 0
    }

    private static let block = Mutex(Block())
    static let blockSize = 4096

    /// `count` fresh bytes (at most `blockSize`), never handed out twice.
    static func take(_ count: Int) -> [UInt8] {
        taking(count) { Array($0) }
    }

    /// `count` fresh bytes in lower-case hex, written from the block (no array in between).
    static func hex(_ count: Int) -> String {
        taking(count) { Hex.encode(UnsafeRawBufferPointer($0)) }
    }

    private static func taking<Result>(_ count: Int, _ read: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        precondition(count <= blockSize, "a nonce larger than the random block")
        return block.withLock { block in
            if block.bytes.count - block.used < count {
                block.bytes = SecureRandom.bytes(blockSize)
                block.used = 0
            }
            defer { block.used += count }
            return block.bytes.withUnsafeBufferPointer { read(UnsafeBufferPointer(rebasing: $0[block.used..<(block.used + count)])) }
        }
    }
}
