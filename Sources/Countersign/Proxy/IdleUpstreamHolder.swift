import CountersignSupport

/// Something that keeps idle upstream connections (the shared pool, a client's own bound
/// ones): it hears their events while they wait, and drops one that stirs.
protocol IdleUpstreamHolder: StreamDelegate {
    /// Closes the connection of `stream` and forgets it.
    func drop(_ stream: Stream)
}

extension IdleUpstreamHolder {
    /// Parks `connection` here: its reads are watched until `idleTimeout`, and its read buffer
    /// is given back once idle.
    func watchWhileIdle(_ connection: UpstreamConnection, idleTimeout: Double, trimmer: IdleReadBufferTrimmer?) {
        // The connection (the caller's) holds its stream throughout: no retain around it.
        withHeld(connection.stream) { stream in
            stream.delegate = self
            // The write timeout stays as the exchange left it (an idle stream has nothing to write,
            // so it cannot fire): switching it off here and on again for the next request cost two
            // libevent timeout changes per request.
            stream.setTimeouts(read: idleTimeout, write: stream.writeTimeout)
            stream.enableRead()
            trimmer?.wentIdle(stream)
        }
    }

    // An idle connection that becomes readable was closed by the server or sent something
    // unsolicited; either way it can no longer carry a request. (An HTTP/2 lane's pair may
    // call back late, deferred, for bytes its exchange already read: nothing to read is no news.)
    func streamReadable(_ stream: Stream) {
        if stream.inputLength > 0 { drop(stream) }
    }
    func streamWritable(_ stream: Stream) {}
    func stream(_ stream: Stream, event: StreamEvent) {
        if !event.connected { drop(stream) }
    }
}
