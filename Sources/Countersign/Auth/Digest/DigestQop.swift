/// The qop an answer goes with (RFC 7616 §3.4), chosen once and then compared as a value:
/// each answer asked whether it was auth-int twice, a string comparison each time.
enum DigestQop {
    case auth
    case authInt

    /// As it is written in the answer and hashed into it.
    var token: String { self == .auth ? "auth" : "auth-int" }
}
