import FoundationEssentials

/// Wall-clock time for protocols that carry it (NTLM's FILETIME).
enum UnixClock {
    static func fileTimeNow() -> UInt64 {
        NTLMv2Response.fileTime(unixSeconds: Date().timeIntervalSince1970)
    }
}
