/// Huffman decoding four bits at a time (RFC 7541 §5.2): a table, built once from the code,
/// gives for each point inside the code tree and each nibble where the walk ends and the
/// symbol it completed, if any (codes are at least 5 bits, so at most one per nibble).
///
/// A point is one of the tree's 256 internal nodes. The string may end only at a point reached
/// by at most 7 one-bits from the root: EOS's prefix, the only padding allowed.
struct HPACKHuffmanDecoder: Sendable {
    struct Step: Sendable {
        var next: UInt8
        /// The completed symbol, or -1.
        var symbol: Int16
        /// The walk reached EOS.
        var fails: Bool
    }

    private let steps: [Step]
    /// Per point: whether the string may end there.
    private let accepting: [Bool]

    static let shared = HPACKHuffmanDecoder()

    private init() {
        // The tree: children[node] = (zero, one); a child >= 0 is a node, < 0 is -(symbol + 1).
        var children: [(Int, Int)] = [(0, 0)]
        var depth = [0]
        var allOnes = [true]
        for symbol in 0...HPACKHuffman.eos {
            let length = Int(HPACKHuffman.codeLengths[symbol])
            let code = HPACKHuffman.codes[symbol]
            var node = 0
            for position in stride(from: length - 1, through: 0, by: -1) {
                let bit = (code >> UInt32(position)) & 1
                let child = bit == 0 ? children[node].0 : children[node].1
                if position == 0 {
                    if bit == 0 { children[node].0 = -(symbol + 1) } else { children[node].1 = -(symbol + 1) }
                } else if child > 0 {
                    node = child
                } else {
                    children.append((0, 0))
                    depth.append(depth[node] + 1)
                    allOnes.append(allOnes[node] && bit == 1)
                    let created = children.count - 1
                    if bit == 0 { children[node].0 = created } else { children[node].1 = created }
                    node = created
                }
            }
        }
        var steps: [Step] = []
        steps.reserveCapacity(children.count * 16)
        for start in 0..<children.count {
            for nibble in 0..<16 {
                var node = start
                var step = Step(next: 0, symbol: -1, fails: false)
                for position in stride(from: 3, through: 0, by: -1) {
                    let bit = (nibble >> position) & 1
                    let child = bit == 0 ? children[node].0 : children[node].1
                    if child < 0 {
                        let symbol = -child - 1
                        if symbol == HPACKHuffman.eos { step.fails = true }
                        step.symbol = Int16(symbol)
                        node = 0
                    } else {
                        node = child
                    }
                }
                step.next = UInt8(node)
                steps.append(step)
            }
        }
        self.steps = steps
        accepting = (0..<children.count).map { allOnes[$0] && depth[$0] <= 7 }
    }

    func decode(_ bytes: [UInt8], _ range: Range<Int>, limit: Int) throws(HPACKError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(min(limit, range.count * 8 / 5))
        var point = 0
        for index in range {
            let byte = Int(bytes[index])
            try advance(&point, byte >> 4, &out, limit)
            try advance(&point, byte & 0xF, &out, limit)
        }
        guard accepting[point] else { throw .invalidHuffman }
        return out
    }

    @inline(__always)
    private func advance(_ point: inout Int, _ nibble: Int, _ out: inout [UInt8], _ limit: Int) throws(HPACKError) {
        let step = steps[point << 4 | nibble]
        guard !step.fails else { throw .invalidHuffman }
        if step.symbol >= 0 {
            guard out.count < limit else { throw .headerListTooLarge }
            out.append(UInt8(step.symbol))
        }
        point = Int(step.next)
    }
}
