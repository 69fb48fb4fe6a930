/// A request to an aws-sigv4 host whose web identity has no keys yet (or keys due for refresh)
/// waits in `.awaitingCredentials` for the one STS fetch of the whole process; then it is
/// forwarded (once: `FetchedCredentials.awsKeys`), or refused with a `Proxy-Status` naming STS.
extension ClientConnection {
    /// The web identity whose keys the request must first wait for, if any.
    func awsKeysToFetch(for upstreamTarget: UpstreamTarget, snapshot: ConfigSnapshot) -> WebIdentityRole? {
        guard case .awsSigV4(let aws)? = upstreamTarget.plan?.signer,
              case .webIdentity(let role) = aws.keys, AWSTemporaryKeys.shared.needsFetch(role) else { return nil }
        return role
    }

    /// Waits for `role`'s keys; `resume` runs once they are there.
    func awaitAWSKeys(_ role: WebIdentityRole, snapshot: ConfigSnapshot, record: AccessRecord, closeOnFailure: Bool,
                      resume: @escaping () -> Void) {
        state = .awaitingCredentials
        AWSTemporaryKeys.shared.fetch(role, context: context, snapshot: snapshot) { [weak self] error in
            // The client may have gone meanwhile; nothing else is read while this request waits.
            guard let self, self.state == .awaitingCredentials else { return }
            self.state = .readingHead
            // Resumed, the request goes on with what there is (keys still valid after a failed refresh).
            guard let error else { return resume() }
            var record = record
            self.fail(with: error, record: &record, close: closeOnFailure)
        }
    }
}
