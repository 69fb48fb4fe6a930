import CountersignSigning

/// An aws-chunked request body on its way upstream: the client's bytes go through the
/// attempt's `AWSChunkedResigner` (chunk signatures re-made from this attempt's seed
/// signature, one chunk held at a time), so what is kept for a replay stays the client's own
/// and is re-signed anew by the next attempt's stage.
final class ChunkResigningStage {
    /// How the re-signed aws-chunked stream sits in the HTTP message.
    enum Framing {
        /// `Content-Length`: the stream is the message body, byte for byte the client's size.
        case contentLength
        /// `Transfer-Encoding: chunked`: the stream arrives without its HTTP framing
        /// (`BodyPump.removeChunkedFraming`) and goes out in HTTP chunks of our own, the last
        /// one once the aws-chunked stream has ended. A length cannot be given instead: it
        /// depends on chunk sizes not known until the whole body has gone by.
        case httpChunked
        /// The HTTP last chunk has been written; nothing more may follow.
        case httpChunkedEnded
    }

    private var resigner: AWSChunkedResigner
    private var framing: Framing

    init(_ resigner: AWSChunkedResigner, framing: Framing) {
        self.resigner = resigner
        self.framing = framing
    }

    /// Whether the aws-chunked stream has ended (its final chunk and trailers went by).
    var isComplete: Bool { resigner.isComplete }

    /// Moves everything in `source` (client bytes) to `destination`, re-signed; nil, or the
    /// reason the body is refused.
    func move(from source: EventBuffer, to destination: EventBuffer) -> AWSSigningError? {
        guard source.count > 0 else { return nil }
        do {
            let out = try resigner.feed(source.removeAll())
            switch framing {
            case .contentLength:
                out.withUnsafeBytes { destination.add($0) }
            case .httpChunked:
                if !out.isEmpty {
                    destination.add(String(out.count, radix: 16) + "\r\n")
                    out.withUnsafeBytes { destination.add($0) }
                    destination.add("\r\n")
                }
                if resigner.isComplete {
                    destination.add("0\r\n\r\n")
                    framing = .httpChunkedEnded
                }
            case .httpChunkedEnded:
                return .invalidChunk("bytes after the end of the aws-chunked body")
            }
            return nil
        } catch let error as AWSSigningError {
            return error
        } catch {
            return .invalidChunk("\(error)")
        }
    }
}
