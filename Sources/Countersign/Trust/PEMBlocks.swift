/// Counting PEM blocks by their BEGIN line, to tell "no more blocks" from "a block that failed":
/// OpenSSL's PEM_read_bio_* loops stop at the first block they cannot read, which would
/// silently drop every certificate or CRL after it.
enum PEMBlocks {
    static func count(of label: String, in bytes: [UInt8]) -> Int {
        let marker = Array("-----BEGIN \(label)-----".utf8)
        guard bytes.count >= marker.count else { return 0 }
        var count = 0
        var index = 0
        while index <= bytes.count - marker.count {
            if bytes[index] == marker[0] && Array(bytes[index..<(index + marker.count)]) == marker {
                count += 1
                index += marker.count
            } else {
                index += 1
            }
        }
        return count
    }
}
