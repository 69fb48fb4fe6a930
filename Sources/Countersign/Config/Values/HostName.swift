/// Syntax checks for DNS names and host-plus-port text shared by listen addresses,
/// URLs and host patterns.
enum HostName {
    /// A DNS name: dot-separated labels of letters, digits, `-` and `_`, none empty or over 63.
    static func isValidDNSName(_ name: String) -> Bool {
        var name = Substring(name)
        if name.hasSuffix(".") { name = name.dropLast() }
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }
        }
    }

    /// Splits `host:port` / `[v6]:port` / `host` into the host (brackets removed) and the port text.
    /// Returns nil for an IPv6 address with a port but without brackets, which is ambiguous.
    static func splitHostPort(_ text: String) -> (host: String, port: String?)? {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return (host, nil) }
            guard rest.hasPrefix(":") else { return nil }
            return (host, String(rest.dropFirst()))
        }
        let colons = text.filter { $0 == ":" }.count
        if colons == 0 { return (text, nil) }
        if colons > 1 { return IPAddress(text) != nil ? (text, nil) : nil }
        let colon = text.firstIndex(of: ":")!
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    static func parsePort(_ text: String, allowZero: Bool) -> UInt16? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = UInt16(text), allowZero || port != 0 else { return nil }
        return port
    }

    /// Lower-cases names and rewrites IP literals canonically, so `[::0001]` and `::1` compare equal.
    static func normalize(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        if host.utf8.contains(UInt8(ascii: ":")), let address = IPAddress(host) { return address.description }
        return host
    }
}
