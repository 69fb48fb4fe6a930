import COpenSSL
import CountersignSupport

/// A streaming hash over OpenSSL's EVP_Digest API: feed bytes in pieces, then `finish()` once.
public final class MessageDigest {
    public let function: HashFunction
    private let context: OpaquePointer
    private var finished = false

    public init(_ function: HashFunction) {
        self.function = function
        guard let context = EVP_MD_CTX_new() else {
            preconditionFailure("OpenSSL could not allocate a digest context (out of memory)")
        }
        self.context = context
        guard EVP_DigestInit_ex2(context, MessageDigest.algorithm(function), nil) == 1 else {
            preconditionFailure("OpenSSL refused to start a \(function.openSSLName) digest")
        }
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        precondition(!finished, "update after finish")
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    public func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        // Contiguous input ([UInt8], Data, a String's UTF-8) is hashed where it lies.
        if bytes.withContiguousStorageIfAvailable({ update(UnsafeRawBufferPointer($0)) }) != nil { return }
        Array(bytes).withUnsafeBytes { update($0) }
    }

    public func update(_ text: String) {
        var text = text
        text.withUTF8 { update(UnsafeRawBufferPointer($0)) }
    }

    public func finish() -> [UInt8] {
        precondition(!finished, "finish called twice")
        finished = true
        var length: UInt32 = 0
        var output = [UInt8](repeating: 0, count: Int(EVP_MD_get_size(MessageDigest.algorithm(function))))
        EVP_DigestFinal_ex(context, &output, &length)
        precondition(Int(length) == output.count, "OpenSSL wrote a digest of unexpected length")
        return output
    }

    public static func hash<Bytes: Sequence>(_ function: HashFunction, _ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        let digest = MessageDigest(function)
        digest.update(bytes)
        return digest.finish()
    }

    public static func hash(_ function: HashFunction, _ text: String) -> [UInt8] {
        let digest = MessageDigest(function)
        digest.update(text)
        return digest.finish()
    }

    /// H(bytes) in lower-case hex appended to `out`, in one call (no digest object, no
    /// intermediate array): Digest hashes three or four short strings per answer.
    static func appendHexHash(_ function: HashFunction, _ bytes: [UInt8], to out: inout [UInt8]) {
        bytes.withUnsafeBytes { appendHexHash(function, $0, to: &out) }
    }

    /// Replaces `bytes[start...]` with its hash in hex (Digest's H(A2), written where A2 was).
    static func replaceWithHexHash(_ function: HashFunction, of bytes: inout [UInt8], from start: Int) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * function.outputLength) { hex in
            var count = 0
            bytes.withUnsafeBytes { all in
                hashHex(function, UnsafeRawBufferPointer(rebasing: all[start...])) { digits in
                    count = digits.count
                    UnsafeMutableRawBufferPointer(hex).copyMemory(from: digits)
                }
            }
            bytes.removeSubrange(start...)
            bytes.append(contentsOf: hex[..<count])
        }
    }

    static func appendHexHash(_ function: HashFunction, _ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        hashHex(function, bytes) { out.append(contentsOf: $0) }
    }

    /// H(bytes) in lower-case hex, lent to `body` from the stack.
    private static func hashHex(_ function: HashFunction, _ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(EVP_MAX_MD_SIZE)) { digest in
            var length: UInt32 = 0
            let done = bytes.withMemoryRebound(to: UInt8.self) { input -> Int32 in
                // MD5 and SHA-256 (most Digest answers) without a provider context per hash.
                switch function {
                case .md5:
                    cs_md5(input.baseAddress, input.count, digest.baseAddress)
                    length = 16
                    return 1
                case .sha256:
                    cs_sha256(input.baseAddress, input.count, digest.baseAddress)
                    length = 32
                    return 1
                case .md4, .sha512_256:
                    return EVP_Digest(input.baseAddress, input.count, digest.baseAddress, &length, algorithm(function), nil)
                }
            }
            precondition(done == 1, "OpenSSL could not compute a \(function.openSSLName) digest")
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * Int(length)) { hex in
                Hex.write(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(digest)[..<Int(length)]), to: hex)
                body(UnsafeRawBufferPointer(hex))
            }
        }
    }

    /// Fetched algorithm objects are immutable and shared; fetching once per function avoids the
    /// provider lookup on every hash.
    static func algorithm(_ function: HashFunction) -> OpaquePointer {
        let fetched: OpaquePointer?
        switch function {
        case .md4: fetched = fetchedMD4
        case .md5: fetched = fetchedMD5
        case .sha256: fetched = fetchedSHA256
        case .sha512_256: fetched = fetchedSHA512_256
        }
        guard let fetched else {
            preconditionFailure("OpenSSL has no \(function.openSSLName); is the legacy provider installed?")
        }
        return fetched
    }

    private static func fetch(_ function: HashFunction) -> OpaquePointer? {
        _ = OpenSSLProviders.legacyAvailable
        return EVP_MD_fetch(nil, function.openSSLName, nil)
    }

    private static let fetchedMD4 = fetch(.md4)
    private static let fetchedMD5 = fetch(.md5)
    private static let fetchedSHA256 = fetch(.sha256)
    private static let fetchedSHA512_256 = fetch(.sha512_256)
}
