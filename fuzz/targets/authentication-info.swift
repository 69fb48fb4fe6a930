// libFuzzer entry point for `Authentication-Info`: a list of auth-params, one field per line.

@_cdecl("LLVMFuzzerTestOneInput")
public func authenticationInfoFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let fields = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    _ = AuthenticationInfo.parse(fieldValues: fields)
    return 0
}
