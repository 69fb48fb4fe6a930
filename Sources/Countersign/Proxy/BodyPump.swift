import CountersignHTTP

/// Moves one framed message body from a source evbuffer to a destination evbuffer
/// (`EventBuffer.move`), so body bytes never enter Swift. Only chunk-size lines and
/// trailers are looked at; chunked framing is re-emitted in normalised form (extensions
/// dropped) or, for an HTTP/1.0 client, removed.
struct BodyPump {
    enum Progress: Equatable {
        /// Waiting for more input or for the destination to drain.
        case waiting
        case finished
        case failed(HTTPParseError)
    }

    enum Output {
        /// Pass chunked framing on (re-encoded).
        case chunked
        /// Strip chunked framing: the reader delimits by connection close.
        case raw
    }

    private enum Framing {
        case none
        case length(remaining: UInt64)
        case chunked(ChunkedDecoder, Output)
        case untilClose
    }

    private var framing: Framing
    /// Body bytes moved so far (payload only, framing excluded).
    private(set) var bytesMoved: UInt64 = 0

    init(_ framing: BodyFraming, output: Output = .chunked) {
        switch framing {
        case .none: self.framing = .none
        case .contentLength(let length): self.framing = length == 0 ? .none : .length(remaining: length)
        case .chunked: self.framing = .chunked(ChunkedDecoder(), output)
        case .untilClose: self.framing = .untilClose
        }
    }

    var isFinished: Bool {
        if case .none = framing { return true }
        return false
    }

    /// From now on a chunked body's HTTP framing is removed (its payload alone goes out): an
    /// aws-chunked body inside `Transfer-Encoding: chunked` is re-signed and framed again by
    /// `ChunkResigningStage`. The decoder's place is kept, so this may come between attempts.
    mutating func removeChunkedFraming() {
        if case .chunked(let decoder, .chunked) = framing { framing = .chunked(decoder, .raw) }
    }

    var isUntilClose: Bool {
        if case .untilClose = framing { return true }
        return false
    }

    /// Moves what can be moved now: at most `room` payload bytes (plus chunk framing). The
    /// caller measures the room where the bytes wait, TLS layers included (`Stream.writeRoom`).
    mutating func pump(from source: EventBuffer, to destination: EventBuffer, room: Int) -> Progress {
        switch framing {
        case .none:
            return .finished
        case .untilClose:
            let held = source.count
            let count = min(held, max(room, 0))
            if count > 0 {
                source.move(count, of: held, to: destination)
                bytesMoved += UInt64(count)
            }
            return .waiting
        case .length(let remaining):
            let held = source.count
            let count = min(UInt64(held), remaining, UInt64(max(room, 0)))
            if count > 0 {
                source.move(Int(count), of: held, to: destination)
                bytesMoved += count
            }
            if count == remaining {
                framing = .none
                return .finished
            }
            framing = .length(remaining: remaining - count)
            return .waiting
        case .chunked(var decoder, let output):
            defer { if case .chunked = framing { framing = .chunked(decoder, output) } }
            var room = room
            while true {
                switch decoder.need {
                case .done:
                    framing = .none
                    return .finished
                case .data(let remaining):
                    let held = source.count
                    let count = min(UInt64(held), remaining, UInt64(max(room, 0)))
                    guard count > 0 else { return .waiting }
                    source.move(Int(count), of: held, to: destination)
                    bytesMoved += count
                    room -= Int(count)
                    decoder.consumedData(count)
                case .line:
                    switch source.lineLength() {
                    case .none:
                        if source.count > ChunkedDecoder.maxLineLength {
                            return .failed(HTTPParseError(.badChunk, "chunk line longer than \(ChunkedDecoder.maxLineLength) bytes"))
                        }
                        return .waiting
                    case .some(let length):
                        let event: ChunkedDecoder.Event
                        do {
                            event = try Self.withLine(source, length) { try decoder.consumeLine($0) }
                        } catch let error as HTTPParseError {
                            return .failed(error)
                        } catch {
                            return .failed(HTTPParseError(.badChunk, "invalid chunked body"))
                        }
                        source.drain(length + 2)
                        if case .chunked = output { Self.emit(event, to: destination) }
                    }
                }
            }
        }
    }

    private static func withLine<T>(_ source: EventBuffer, _ length: Int, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        try body(source.pullUp(length) ?? UnsafeRawBufferPointer(start: nil, count: 0))
    }

    private static func emit(_ event: ChunkedDecoder.Event, to destination: EventBuffer) {
        switch event {
        case .chunk(let size): destination.add(String(size, radix: 16) + "\r\n")
        case .chunkEnd: destination.add("\r\n")
        case .lastChunk: destination.add("0\r\n")
        case .trailer(let field) where HopByHop.isDroppedFromTrailer(field): break
        case .trailer(let field): destination.add("\(field.name): \(field.value)\r\n")
        case .end: destination.add("\r\n")
        }
    }

}
