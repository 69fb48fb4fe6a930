import CLibevent
import COpenSSL

/// Tells when a TLS stream read ciphertext from its peer, whether or not it decrypted yet:
/// part of a record reaches no input buffer and calls no read callback, yet it is a head
/// (or a handshake) in progress, and a peer trickling one record byte by byte must meet the
/// same deadline as one trickling plaintext. A callback on the SSL's read BIO (the socket,
/// or libevent's BIO over the bufferevent below a filter) sees every read.
///
/// Only the first read after each `arm()` is told: the deadline runs from a head's first byte
/// and no later byte moves it. Between, the BIO has no callback, which every BIO call (reads,
/// writes and their controls alike) would otherwise go through, several per request.
///
/// Once the stream's own TLS reader reads the socket (after the handshake), the reader says
/// when it holds part of a record (`readerHeldCiphertext`) and the BIO goes quiet for good: a
/// whole record decrypts in the same read and its bytes reach the input, where the head
/// reader starts the deadline itself.
final class RawReadWatch {
    /// The BIO whose callback watches, until the stream's reader takes over.
    private var bio: OpaquePointer?
    private let arrived: () -> Void

    fileprivate init?(ssl: OpaquePointer, arrived: @escaping () -> Void) {
        guard let bio = SSL_get_rbio(ssl) else { return nil }
        self.bio = bio
        self.arrived = arrived
        BIO_set_callback_arg(bio, Unmanaged.passUnretained(self).toOpaque().assumingMemoryBound(to: CChar.self))
        arm()
    }

    /// The next ciphertext read is told (once).
    func arm() {
        guard let bio else { return }
        BIO_set_callback_ex(bio, rawReadCallback)
    }

    /// Inside the BIO's read, after its last look at the callback: removing it here is safe.
    fileprivate func fired() {
        if let bio { BIO_set_callback_ex(bio, nil) }
        arrived()
    }

    /// The stream's reader reports partial records from now on.
    func handOverToReader() { detach() }

    func readerHeldCiphertext() { arrived() }

    /// Before the SSL (and its BIO) is freed, or this watch released.
    func detach() {
        guard let bio else { return }
        BIO_set_callback_ex(bio, nil)
        BIO_set_callback_arg(bio, nil)
        self.bio = nil
    }

    deinit { detach() }
}

/// Runs inside `SSL_read`/`SSL_do_handshake`, so `arrived` must only take note (start a
/// deadline), never close the stream.
private func rawReadCallback(_ bio: OpaquePointer?, _ operation: Int32, _ argp: UnsafePointer<CChar>?, _ length: Int,
                             _ argi: Int32, _ argl: Int, _ result: Int32, _ processed: UnsafeMutablePointer<Int>?) -> Int {
    if operation == BIO_CB_READ | BIO_CB_RETURN, result > 0, let bio, let context = BIO_get_callback_arg(bio) {
        Unmanaged<RawReadWatch>.fromOpaque(UnsafeRawPointer(context)).takeUnretainedValue().fired()
    }
    return Int(result)
}

extension Stream {
    /// Calls `arrived` when this TLS stream next reads ciphertext, and again after each
    /// `rawReadWatch?.arm()` (nothing on a plain stream).
    func watchRawReads(_ arrived: @escaping () -> Void) {
        rawReadWatch?.detach()
        guard let ssl else {
            rawReadWatch = nil
            return
        }
        rawReadWatch = RawReadWatch(ssl: ssl, arrived: arrived)
        if reader != nil { rawReadWatch?.handOverToReader() }
    }

    /// Ciphertext read but not decrypted yet: a record in progress inside the SSL, or (under
    /// a filter) bytes waiting in the bufferevent below.
    var holdsUndecryptedInput: Bool {
        guard let ssl else { return false }
        return SSL_has_pending(ssl) == 1 || inputBelowFilter > 0
    }
}
