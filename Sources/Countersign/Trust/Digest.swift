import CEventSSL

/// SHA-256 through OpenSSL's EVP interface.
enum Digest {
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &output, &length, EVP_sha256(), nil)
        }
        precondition(ok == 1, "EVP_Digest with SHA-256 cannot fail on in-memory input")
        return Array(output.prefix(Int(length)))
    }
}
