import CLibevent
import COpenSSL

/// Tells when a TLS stream read ciphertext from its peer, whether or not it decrypted yet:
/// part of a record reaches no input buffer and calls no read callback, yet it is a head
/// (or a handshake) in progress, and a peer trickling one record byte by byte must meet the
/// same deadline as one trickling plaintext. A callback on the SSL's read BIO (the socket,
/// or libevent's BIO over the bufferevent below a filter) sees every read.
final class RawReadWatch {
    private var bio: OpaquePointer?
    private let arrived: () -> Void

    fileprivate init?(ssl: OpaquePointer, arrived: @escaping () -> Void) {
        guard let bio = SSL_get_rbio(ssl) else { return nil }
        self.bio = bio
        self.arrived = arrived
        BIO_set_callback_arg(bio, Unmanaged.passUnretained(self).toOpaque().assumingMemoryBound(to: CChar.self))
        BIO_set_callback_ex(bio, rawReadCallback)
    }

    fileprivate func notify() { arrived() }

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
        Unmanaged<RawReadWatch>.fromOpaque(UnsafeRawPointer(context)).takeUnretainedValue().notify()
    }
    return Int(result)
}

extension Stream {
    /// Calls `arrived` whenever this TLS stream reads ciphertext (nothing on a plain stream).
    func watchRawReads(_ arrived: @escaping () -> Void) {
        rawReadWatch?.detach()
        guard let ssl else {
            rawReadWatch = nil
            return
        }
        rawReadWatch = RawReadWatch(ssl: ssl, arrived: arrived)
    }

    /// Ciphertext read but not decrypted yet: a record in progress inside the SSL, or (under
    /// a filter) bytes waiting in the bufferevent below.
    var holdsUndecryptedInput: Bool {
        guard let ssl else { return false }
        return SSL_has_pending(ssl) == 1 || inputBelowFilter > 0
    }
}
