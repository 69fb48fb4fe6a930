import CountersignSigning

/// An aws-chunked request body on its way upstream: the client's bytes go through the
/// attempt's `AWSChunkedResigner` (chunk signatures re-made from this attempt's seed
/// signature, one chunk held at a time), so what is kept for a replay stays the client's own
/// and is re-signed anew by the next attempt's stage.
final class ChunkResigningStage {
    private var resigner: AWSChunkedResigner

    init(_ resigner: AWSChunkedResigner) { self.resigner = resigner }

    /// Moves everything in `source` (client bytes) to `destination`, re-signed; nil, or the
    /// reason the body is refused.
    func move(from source: EventBuffer, to destination: EventBuffer) -> AWSSigningError? {
        guard source.count > 0 else { return nil }
        do {
            let out = try resigner.feed(source.removeAll())
            out.withUnsafeBytes { destination.add($0) }
            return nil
        } catch let error as AWSSigningError {
            return error
        } catch {
            return .invalidChunk("\(error)")
        }
    }
}
