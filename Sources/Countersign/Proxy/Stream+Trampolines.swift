import CLibevent

// The trampolines take a strong reference for the length of the callback, so a delegate
// may close and release its Stream from inside a callback safely.
func streamReadTrampoline(_ bev: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    let stream = Unmanaged<Stream>.fromOpaque(context).takeUnretainedValue()
    if stream.readWatermarkLifted { stream.restoreReadWatermark() }
    stream.delegate?.streamReadable(stream)
    stream.flushQueued()
    stream.readPendingTLS()
}

func streamWriteTrampoline(_ bev: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    let stream = Unmanaged<Stream>.fromOpaque(context).takeUnretainedValue()
    stream.delegate?.streamWritable(stream)
    stream.flushQueued()
}

func streamEventTrampoline(_ bev: OpaquePointer?, _ events: Int16, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    let stream = Unmanaged<Stream>.fromOpaque(context).takeUnretainedValue()
    if events & Int16(BEV_EVENT_CONNECTED) != 0 { stream.connected() }
    stream.delegate?.stream(stream, event: StreamEvent(flags: events))
    stream.flushQueued()
    // A handshake can end with the peer's first records already read ahead.
    stream.readPendingTLS()
}

/// Our reader's and writer's news (socket_reader.c, socket_writer.c): bytes arrived (EV_READ), the
/// output drained after a wait (EV_WRITE), part of a TLS record arrived (CS_READER_CIPHERTEXT),
/// or how reading or writing ended, as the bufferevent reports it.
func streamOwnIOTrampoline(_ what: Int16, _ context: UnsafeMutableRawPointer?) {
    switch what {
    case Int16(EV_READ): streamReadTrampoline(nil, context)
    case Int16(EV_WRITE): streamWriteTrampoline(nil, context)
    case Int16(CS_READER_CIPHERTEXT):
        guard let context else { return }
        Unmanaged<Stream>.fromOpaque(context).takeUnretainedValue().rawReadWatch?.readerHeldCiphertext()
    default: streamEventTrampoline(nil, what, context)
    }
}
