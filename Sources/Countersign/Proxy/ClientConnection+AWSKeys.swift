/// A request to an aws-sigv4 host whose web identity has no keys yet (or keys due for refresh)
/// waits in `.holdingBody` (nothing held yet) for the one STS fetch of the whole process;
/// then it is forwarded, or refused with a `Proxy-Status` naming STS.
extension ClientConnection {
    /// Whether the request must first wait for keys; if so, `resume` runs once they are there.
    func awaitsAWSKeys(for upstreamTarget: UpstreamTarget, snapshot: ConfigSnapshot, record: AccessRecord, closeOnFailure: Bool,
                       resume: @escaping () -> Void) -> Bool {
        // A request resumed after its wait goes on with what it has (keys still valid after a failed refresh).
        guard state != .holdingBody, case .awsSigV4(let aws)? = upstreamTarget.entry.flatMap({ snapshot.signers[$0.pattern] }),
              case .webIdentity(let role) = aws.keys, AWSTemporaryKeys.shared.needsFetch(role) else { return false }
        state = .holdingBody
        AWSTemporaryKeys.shared.fetch(role, context: context, snapshot: snapshot) { [weak self] error in
            // The client may have gone meanwhile; nothing else is read while this request waits.
            guard let self, self.state == .holdingBody, self.heldRequest == nil else { return }
            guard let error else { return resume() }
            var record = record
            self.fail(with: error, record: &record, close: closeOnFailure)
        }
        return true
    }
}
