/// Calls `body` with `object`, with no retain and release around the call. The optimizer
/// retains an object read through a class's stored reference around each call that uses it
/// (an atomic add and an atomic subtract, ~40 cycles), as the call might let the last
/// reference go. Only for an object provably held elsewhere for the whole call: a `let` of an
/// object that outlives the caller (the worker context's pool) or a process-wide `static let`
/// (the metrics); never one the call itself may release.
@inlinable @inline(__always)
public func withHeld<Object: AnyObject, Result>(_ object: @autoclosure () -> Object, _ body: (Object) -> Result) -> Result {
    // Made unmanaged in a statement of its own: the reference read ends here, before `body`
    // (as a parameter, it was held, and so retained, for the whole call).
    let unmanaged = Unmanaged.passUnretained(object())
    return unmanaged._withUnsafeGuaranteedRef(body)
}

/// `withHeld` of an optional reference: nil when there is none.
@inlinable @inline(__always)
public func withHeld<Object: AnyObject, Result>(_ object: @autoclosure () -> Object?, _ body: (Object) -> Result) -> Result? {
    guard let unmanaged = object().map({ Unmanaged.passUnretained($0) }) else { return nil }
    return unmanaged._withUnsafeGuaranteedRef(body)
}
