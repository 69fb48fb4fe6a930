/// Re-signs an aws-chunked body on its way through: the client's framing is parsed (bounded,
/// one chunk held at a time) and written out again with our chunk signatures, chained from our
/// seed signature, and our trailer signature. Sizes and trailing fields are written exactly as
/// the client sent them and every signature has the same 64 hex digits, so the body's length —
/// `Content-Length`, `X-Amz-Decoded-Content-Length` — does not change. An unsigned body
/// (`STREAMING-UNSIGNED-PAYLOAD-TRAILER`) is written back as it came, checked the same way.
public struct AWSChunkedResigner: CustomStringConvertible, CustomReflectable {
    private var parser: AWSChunkedParser
    private var signer: AWSChunkSigner?
    private var trailers: [(name: String, value: String)] = []
    private var trailerLines: [String] = []
    /// Whether the client's body ended in a trailer signature, which ours replaces line for line.
    private var trailerSignature = TrailerSignature.absent

    private enum TrailerSignature { case absent, present }

    /// `signed` is the request's new signature (its `chunkSigner()` is used when the mode has
    /// chunk signatures).
    public init(mode: AWSPayloadHash, signed: AWSSignedRequest, maximumChunkBytes: Int) throws {
        parser = try AWSChunkedParser(mode: mode, maximumChunkBytes: maximumChunkBytes)
        signer = mode.hasChunkSignatures ? signed.chunkSigner() : nil
    }

    public var isComplete: Bool { parser.isComplete }

    public var description: String { "AWSChunkedResigner(\(parser.mode.value))" }
    public var customMirror: Mirror { Mirror(self, children: ["mode": parser.mode.value], displayStyle: .struct) }

    /// The bytes to send for what arrived; empty while a chunk is still being collected.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws -> [UInt8] {
        var out: [UInt8] = []
        for event in try parser.feed(bytes) {
            switch event {
            case .chunk(let sizeText, let data):
                out += Array(try header(sizeText: sizeText, data: data).utf8)
                out += data
                out += [0x0D, 0x0A]
            case .finalChunk(let sizeText):
                out += Array(try header(sizeText: sizeText, data: []).utf8)
            case .trailer(let line, let name, let value):
                trailers.append((name, value))
                trailerLines.append(line)
            case .trailerSignature:
                trailerSignature = .present
            case .end:
                for line in trailerLines { out += Array((line + "\r\n").utf8) }
                if case .present = trailerSignature, var signer {
                    out += Array("x-amz-trailer-signature:\(try signer.signTrailer(trailers))\r\n".utf8)
                    self.signer = signer
                }
                out += [0x0D, 0x0A]
            }
        }
        return out
    }

    private mutating func header(sizeText: String, data: [UInt8]) throws -> String {
        guard var signer else { return sizeText + "\r\n" }
        defer { self.signer = signer }
        return try signer.chunkHeaderLine(sizeText: sizeText, data: data)
    }
}
