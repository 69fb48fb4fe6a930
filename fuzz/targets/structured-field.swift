// libFuzzer entry point for the RFC 9651 parser and serializer: any bytes, read as an item, a
// list and a dictionary, must parse or fail without crashing; whatever parses must serialize, and
// the serialization must parse back to the same value and serialize to itself (canonical form),
// so a signature over a re-serialized field always covers what the sender meant.

@_cdecl("LLVMFuzzerTestOneInput")
public func structuredFieldFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for type in [StructuredFieldType.item, .list, .dictionary] {
        guard let value = try? StructuredFieldParser.parse(text, as: type) else { continue }
        let serialized: String
        do {
            serialized = try StructuredFieldSerializer.serialize(value)
        } catch {
            preconditionFailure("a parsed \(type) does not serialize: \(error)")
        }
        // An empty list or dictionary serializes to nothing, which is the field left out.
        if serialized.isEmpty, type != .item { continue }
        guard let again = try? StructuredFieldParser.parse(serialized, as: type) else {
            preconditionFailure("the serialization of a parsed \(type) does not parse: \(serialized)")
        }
        precondition(again == value, "the serialization of a parsed \(type) parses to another value")
        precondition((try? StructuredFieldSerializer.serialize(again)) == serialized, "serialization is not canonical")
    }
    return 0
}
