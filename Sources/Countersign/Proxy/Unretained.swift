/// `object`, used by `body` without a retain and release of its own. A class reference read
/// from a stored property is retained for the length of every call made on it, in case the
/// call lets go of it: ~40 instructions each time, dozens of times per forwarded request.
/// Only for an object that something else surely holds until `body` returns (each use says
/// what holds it), never one `body` could let go of.
@inline(__always)
func unretained<Object: AnyObject, Result>(_ object: Object, _ body: (Object) -> Result) -> Result {
    Unmanaged.passUnretained(object)._withUnsafeGuaranteedRef(body)
}
