import COpenSSL

/// Small helpers around OpenSSL memory BIOs, used to feed PEM text in and read printed text out.
enum MemoryBIO {
    /// Runs `body` with a read-only BIO over `bytes`; the BIO lives only for the call.
    static func reading<T>(_ bytes: [UInt8], _ body: (OpaquePointer) throws -> T) rethrows -> T {
        try bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else {
                preconditionFailure("BIO_new_mem_buf failed: out of memory")
            }
            defer { BIO_free(bio) }
            return try body(bio)
        }
    }

    /// Runs `body` with a writable BIO and returns what it wrote as text.
    static func text(_ body: (OpaquePointer) -> Void) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { preconditionFailure("BIO_new failed: out of memory") }
        defer { BIO_free(bio) }
        body(bio)
        var data: UnsafeMutablePointer<CChar>?
        let length = cs_BIO_get_mem_data(bio, &data)
        guard let data, length > 0 else { return "" }
        let bytes = UnsafeRawBufferPointer(start: data, count: Int(length))
        return String(decoding: bytes, as: UTF8.self)
    }
}
