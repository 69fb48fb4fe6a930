/// Calls `body` with `object`, with no retain and release around the call. The optimizer
/// retains an object read through a class's stored reference around each call that uses it
/// (an atomic add and an atomic subtract, ~40 cycles), as the call might let the last
/// reference go. Only for an object provably held elsewhere for the whole call: a `let` of an
/// object that outlives the caller (the worker context's pool), a process-wide `static let`
/// (the metrics), or a stream whose holder `body` cannot change (its state read, bytes moved
/// or written, its limits set: libevent calls nothing back from inside those). Never for one
/// that `body` may let go (a machine's next step, a close, a callback run in place).
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
