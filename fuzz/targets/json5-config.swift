// libFuzzer entry point for the configuration loader: any text must load or come back as
// ConfigErrors naming a problem, never crash. Paths it names resolve under a directory that
// does not exist, so no input can make the fuzzer read real files.

@_cdecl("LLVMFuzzerTestOneInput")
public func json5ConfigFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        _ = try ConfigLoader.load(text: text, sourcePath: "/nonexistent-countersign-fuzz/countersign.json5", environment: [:])
    } catch let errors as ConfigErrors {
        precondition(!errors.errors.isEmpty, "ConfigErrors without an error")
    } catch {
        preconditionFailure("the loader threw \(type(of: error)), not ConfigErrors")
    }
    return 0
}
