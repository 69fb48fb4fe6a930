extension HeadParser {
    /// A request line of the usual shape, METHOD SP TARGET SP HTTP/1.x CR with every part
    /// sound, read part by part before the line scan, which then starts after it. It decides
    /// nothing: any other line is left to `parseRequestLine`, which refuses it or accepts it
    /// just as it would accept this one (two spaces, so `splitOnSpaces` finds these parts).
    struct UsualRequestLine {
        let start: Int
        let methodEnd: Int
        let targetEnd: Int
        let version: HTTPVersion
        /// Where the line's CR is.
        let end: Int

        init?(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) {
            var methodEnd = start
            while methodEnd < limit, CharacterClass.isTokenChar(bytes[methodEnd]) { methodEnd += 1 }
            guard methodEnd > start, methodEnd < limit, bytes[methodEnd] == SP else { return nil }
            let targetEnd = ByteScan.endOfVisible(bytes, from: methodEnd + 1, limit: limit)
            let end = targetEnd + 9
            guard targetEnd > methodEnd + 1, end < limit, bytes[targetEnd] == SP, bytes[end] == CR,
                  let version = HeadParser.anyVersion(bytes, (targetEnd + 1)..<end), version.major == 1 else { return nil }
            self.start = start
            self.methodEnd = methodEnd
            self.targetEnd = targetEnd
            self.version = version
            self.end = end
        }

        /// The method, where the target lies, and the version, once the head is known to be whole.
        func parts(_ bytes: UnsafeRawBufferPointer) -> (String, Range<Int>, HTTPVersion) {
            return (HeadParser.method(bytes, start..<methodEnd), (methodEnd + 1)..<targetEnd, version)
        }
    }
}
