import COpenSSL
import CountersignSupport

/// RFC 9530 `Content-Digest`: the hash of a message's content (its bytes after transfer
/// coding is removed), `sha-256=:…:` or `sha-512=:…:`. Fed the body piece by piece, so a held
/// body is hashed where it lies.
public final class ContentDigester {
    public enum Algorithm: String, CaseIterable, Sendable {
        case sha256 = "sha-256"
        case sha512 = "sha-512"

        var digest: OpaquePointer? { self == .sha256 ? EVP_sha256() : EVP_sha512() }
    }

    public let algorithm: Algorithm
    private let context: OpaquePointer

    public init(_ algorithm: Algorithm) {
        self.algorithm = algorithm
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, algorithm.digest, nil) == 1 else {
            preconditionFailure("OpenSSL could not start a \(algorithm.rawValue) digest")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    public func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    public func finish() -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &output, &length)
        return Array(output.prefix(Int(length)))
    }

    /// The field value for a whole body.
    public static func fieldValue(of body: [UInt8], _ algorithm: Algorithm) -> String {
        let digester = ContentDigester(algorithm)
        digester.update(body)
        return fieldValue(digest: digester.finish(), algorithm)
    }

    public static func fieldValue(digest: [UInt8], _ algorithm: Algorithm) -> String {
        "\(algorithm.rawValue)=:\(Base64.encode(digest)):"
    }
}

/// What a received `Content-Digest` claims, for checking against the body as it arrives.
public struct ContentDigestClaim: Equatable, Sendable {
    public let algorithm: ContentDigester.Algorithm
    public let digest: [UInt8]

    /// The strongest digest we know of in the field (unknown algorithms are ignored, RFC 9530
    /// §2); nil when none is usable. Throws when the field is not a valid dictionary.
    public static func strongest(in fieldValue: String) throws -> ContentDigestClaim? {
        let dictionary = try StructuredFieldParser.parseDictionary(fieldValue)
        for algorithm in [ContentDigester.Algorithm.sha512, .sha256] {
            guard let member = dictionary[algorithm.rawValue] else { continue }
            guard case .item(let item) = member, case .byteSequence(let digest) = item.bare else {
                throw StructuredFieldError(reason: "\(algorithm.rawValue) is not a byte sequence", offset: 0)
            }
            return ContentDigestClaim(algorithm: algorithm, digest: digest)
        }
        return nil
    }

    public func matches(_ computed: [UInt8]) -> Bool { ConstantTime.equal(digest, computed) }
}
