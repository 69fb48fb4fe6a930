/// The DATA frames for `count` body octets of a stream (`H2Connection.sendData(stream:held:endStream:)`):
/// each within the peer's SETTINGS_MAX_FRAME_SIZE, END_STREAM on the last when `endStream`
/// (one empty frame when the stream ends with no octets).
public struct H2DataFrames: Sequence, Sendable {
    public struct Frame: Equatable, Sendable {
        public let length: Int
        public let endStream: Bool
    }

    public let stream: UInt32
    /// Body octets the frames carry: what both windows took.
    public let count: Int
    let maxFrameSize: Int
    let endStream: Bool

    public struct Iterator: IteratorProtocol {
        fileprivate let frames: H2DataFrames
        fileprivate var offset = 0
        fileprivate var emptyEndPending: Bool

        public mutating func next() -> Frame? {
            guard offset < frames.count else {
                guard emptyEndPending else { return nil }
                emptyEndPending = false
                return Frame(length: 0, endStream: true)
            }
            let length = Swift.min(frames.count - offset, frames.maxFrameSize)
            offset += length
            return Frame(length: length, endStream: frames.endStream && offset == frames.count)
        }
    }

    public func makeIterator() -> Iterator { Iterator(frames: self, emptyEndPending: endStream && count == 0) }
}
