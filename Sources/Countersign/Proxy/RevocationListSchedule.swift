import CountersignTrust

/// The CRLs every compiled trust policy of a snapshot holds (hosts and the parent proxy), once
/// each: what `/metrics` (`countersign_crl_next_update_timestamp_seconds`) and `/status` show
/// so a CRL that stops being republished is seen before its nextUpdate fails every handshake
/// closed.
struct RevocationListSchedule {
    struct Entry: Equatable {
        /// The CRL file.
        let file: String
        let issuer: String
        /// nil when the CRL has none (it is never current: the handshake says so).
        let nextUpdate: Int64?
    }

    let entries: [Entry]

    init(_ snapshot: ConfigSnapshot) {
        var entries: [Entry] = []
        let contexts = snapshot.hostPlans.sorted { $0.key < $1.key }.compactMap(\.value.tls) + [snapshot.parent?.tls].compactMap { $0 }
        for context in contexts {
            for crl in context.policy.crls {
                let entry = Entry(file: crl.source, issuer: crl.issuer, nextUpdate: crl.nextUpdate)
                if !entries.contains(entry) { entries.append(entry) }
            }
        }
        self.entries = entries
    }

    /// For `countersign check`: each CRL that is already unusable, or will be within three
    /// days (the amber line of /status), in a sentence.
    func warnings(now: Int64) -> [String] {
        entries.compactMap { crl in
            guard let nextUpdate = crl.nextUpdate else {
                return "CRL \(crl.file) (issuer \(crl.issuer)) has no nextUpdate: chains that CA issued are refused"
            }
            let when = UTCTimestamp.string(nextUpdate)
            if nextUpdate < now {
                return "CRL \(crl.file) (issuer \(crl.issuer)) is past its nextUpdate \(when): chains that CA issued are refused until a fresh CRL is installed"
            }
            if nextUpdate - now < 3 * 86400 {
                return "CRL \(crl.file) (issuer \(crl.issuer)) reaches its nextUpdate at \(when): install a fresh CRL before then, or chains that CA issued will be refused"
            }
            return nil
        }
    }
}
