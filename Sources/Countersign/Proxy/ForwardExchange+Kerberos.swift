import CountersignAuth

/// A first Negotiate token made on a KDC thread: for a preemptive answer on the connection
/// just attached, or for a challenge that waits unread.
struct KerberosWait {
    enum Purpose { case preemptive, challenge }

    /// The token asked for, and for which status's authenticator.
    var pending: (status: Int, request: KerberosRequest, purpose: Purpose)?
    /// The KDC job making it: cancelled when the exchange stops waiting for it, so a job for
    /// a client that left never holds a place in the queue or a KDC thread.
    var job: KDCJob?
    /// Numbers each request: a result for an earlier one (the connection changed) is dropped.
    var requests = 0

    /// Whatever is asked or made is no longer wanted.
    mutating func forget() {
        pending = nil
        requests += 1
        job?.cancel()
        job = nil
    }
}

extension ForwardExchange {
    /// Makes the first Kerberos token on a KDC thread; the exchange waits in the machine's
    /// `preparingAnswer` and takes it when it comes back to this loop. A result for an
    /// exchange that ended, or for an earlier connection, is dropped (its context freed).
    func prepareKerberos() {
        guard let (status, request, _) = kerberos.pending else { return }
        kerberos.requests += 1
        let number = kerberos.requests
        // The wait is the KDC's, bounded on its own: not a silent upstream.
        responseDeadline.end()
        if kerberosTimer == nil { kerberosTimer = Timer(base: context.base) { [unowned self] in self.kerberosWaitExpired() } }
        kerberosTimer?.arm(seconds: KerberosOffLoop.maximumWait)
        kerberos.job?.cancel()
        kerberos.job = KerberosOffLoop.prepare(request, context: context) { [weak self] prepared in
            guard let self, !self.machine.isDone, self.kerberos.requests == number else { return }
            self.take(prepared, for: status)
        }
    }

    /// No token within `maximumWait` (a KDC thread is stuck behind others on a silent KDC):
    /// the exchange goes on without Kerberos, and the late result is dropped.
    func kerberosWaitExpired() {
        guard let (status, request, _) = kerberos.pending, !machine.isDone else { return }
        kerberos.requests += 1
        kerberos.job?.cancel()
        take(.refused(request, reason: "the KDC did not answer within \(Seconds.text(KerberosOffLoop.maximumWait))"), for: status)
    }

    private func take(_ prepared: PreparedNegotiate, for status: Int) {
        kerberosTimer?.cancel()
        kerberos.job = nil
        // The client's idle_timeout counts again from here (it was not idle while it waited).
        client.stream.enableRead()
        let purpose = kerberos.pending?.purpose
        kerberos.pending = nil
        authenticators[status]?.adopt(prepared)
        if purpose == .preemptive {
            answerOnConnection()
            // Another challenger's first token is made too before the head goes.
            if kerberos.pending != nil { return prepareKerberos() }
        }
        perform(.answerPrepared(handshakeLeg: carriesHandshakeLeg))
    }
}
