// libFuzzer entry point for reading RFC 9421 `Signature-Input` as a verifier does: the first line
// is the field, the rest are header fields of a fixed request (`name: value`). Every member must
// turn into components and parameters or be refused, and a signature base must be built or
// refused, without crashing and without a line break in the base but the ones between lines.

@_cdecl("LLVMFuzzerTestOneInput")
public func signatureInputFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    guard let first = lines.first, let inputs = try? StructuredFieldParser.parseDictionary(String(first)) else { return 0 }
    var fields: [(name: String, value: String)] = []
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        fields.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
    }
    let request = SignableRequest(method: "POST", scheme: "https", authority: "example.com:443", target: "/a/b?x=1&y=%20&x=2", fields: fields)
    let response = SignableResponse(status: 200, fields: fields, request: request)
    for (_, member) in inputs.entries {
        guard case .innerList(let list) = member,
              let components = try? list.items.map(SignatureComponent.init(item:)),
              (try? SignatureParameters(list.parameters)) != nil else { continue }
        for message in [SignableMessage.request(request), .response(response)] {
            guard let built = try? SignatureBase.build(message, components: components, parameters: list.parameters) else { continue }
            let lineCount = built.base.split(separator: "\n", omittingEmptySubsequences: false).count
            precondition(lineCount >= components.count + 1, "the base has fewer lines than components")
            precondition(built.base.hasSuffix(built.signatureParams), "the base does not end with its signature parameters")
        }
    }
    return 0
}
