/// Why a header block could not be decoded. Every case is a connection error of type
/// COMPRESSION_ERROR (RFC 9113 §4.3), except `headerListTooLarge`: the block went through the
/// dynamic table whole, so only its stream fails.
public enum HPACKError: Error, Equatable, Sendable {
    /// The block ended inside a representation.
    case truncated
    /// An integer needs more than 31 bits (RFC 7541 §5.1 leaves the bound to us).
    case integerOverflow
    /// An index of 0, or past the end of the static and dynamic tables.
    case invalidIndex(Int)
    /// The Huffman string contains EOS, or is padded with more than 7 bits or with bits
    /// that are not EOS's prefix (RFC 7541 §5.2).
    case invalidHuffman
    /// A dynamic table size update above the limit our SETTINGS_HEADER_TABLE_SIZE allows.
    case tableSizeAboveLimit(Int)
    /// A dynamic table size update after the first field of the block (RFC 7541 §4.2).
    case tableSizeUpdateNotAtStart
    /// The decoded list exceeds the limit (SETTINGS_MAX_HEADER_LIST_SIZE): nothing past it was
    /// kept, and the dynamic table is as the encoder expects.
    case headerListTooLarge
}
