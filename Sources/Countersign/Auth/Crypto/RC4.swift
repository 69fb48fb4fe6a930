import COpenSSL

/// RC4 as NTLM's key exchange uses it: one 16-byte key, one short message, no state kept.
public enum RC4 {
    public static func transform(key: [UInt8], _ input: [UInt8]) throws -> [UInt8] {
        guard OpenSSLProviders.legacyAvailable, let cipher = EVP_CIPHER_fetch(nil, "RC4", nil) else {
            throw AuthError("RC4 is unavailable: OpenSSL's legacy provider (legacy.so) did not load, so NTLM key exchange cannot be answered")
        }
        defer { EVP_CIPHER_free(cipher) }
        guard let context = EVP_CIPHER_CTX_new() else { throw AuthError("OpenSSL could not allocate a cipher context") }
        defer { EVP_CIPHER_CTX_free(context) }
        // RC4's default key length in OpenSSL is 128 bits, exactly NTLM's key size.
        guard key.count == 16 else { throw AuthError("NTLM key exchange needs a 16-byte RC4 key") }
        let ok = EVP_EncryptInit_ex2(context, cipher, key, nil, nil) == 1
        guard ok else { throw AuthError("OpenSSL refused the RC4 key") }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        guard EVP_EncryptUpdate(context, &output, &written, input, Int32(input.count)) == 1 else {
            throw AuthError("OpenSSL RC4 encryption failed")
        }
        return Array(output.prefix(Int(written)))
    }
}
