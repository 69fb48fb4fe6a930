/// Method comparisons on the per-request path. A method is case-sensitive (RFC 9110 §9.1);
/// lengths are compared first, so a GET asked whether it is a HEAD or a CONNECT is told no
/// without a call into the string runtime (~30 instructions each, four a forwarded request).
/// Inlinable: the other modules ask it too, and a call cost as much as the comparison.
public enum RequestMethod {
    @inlinable @inline(__always) public static func equal(_ method: String, _ name: String) -> Bool {
        method.utf8.count == name.utf8.count && method == name
    }
}
