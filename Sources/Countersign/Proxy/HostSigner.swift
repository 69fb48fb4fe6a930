import CountersignConfig
import CountersignHTTP
import CountersignSigning
import CountersignSupport
import Glibc

/// How a held request body is hashed before its head goes: an RFC 9530 `Content-Digest`, or the
/// SigV4 payload hash in `X-Amz-Content-Sha256`.
enum HeldBodyHash {
    case contentDigest(ContentDigester.Algorithm)
    case awsPayload
}

/// A host's compiled `sign`: the one signing stage, whatever the format. Made last, over the
/// head exactly as it goes, and anew for every attempt.
indirect enum HostSigner: Sendable {
    case messageSignature(RequestSigner)
    case awsSigV4(AWSHostSigning)

    /// The `sign.format` this signer makes (the label of `countersign_signatures_total`).
    var format: String {
        switch self {
        case .messageSignature: return "rfc9421"
        case .awsSigV4: return "aws-sigv4"
        }
    }

    /// What the request's body needs before its head can be signed; nil: it streams.
    func heldBodyHash(for head: RequestHead) -> HeldBodyHash? {
        switch self {
        case .messageSignature(let signer):
            return signer.digest.map(HeldBodyHash.contentDigest)
        case .awsSigV4(let aws):
            return aws.signer.holdsBody(contentSHA256: head.headers.values("X-Amz-Content-Sha256").last) ? .awsPayload : nil
        }
    }

    /// A signed head, and for an aws-chunked body the re-signer its bytes go through.
    struct Signed {
        let head: [UInt8]
        let body: AWSChunkedResigner?
    }

    func sign(head: [UInt8], to target: UpstreamTarget, originTarget: String, hasBody: Bool, limits: Limits) -> Result<Signed, ProxyError> {
        let now = Int64(time(nil))
        switch self {
        case .messageSignature(let signer):
            do {
                return .success(Signed(head: try signer.sign(head: head, scheme: target.scheme, authority: target.hostField,
                                                             originTarget: originTarget, now: now), body: nil))
            } catch let error as SignatureError {
                // What the request itself holds (a field a component reads that is not valid) is the client's to fix.
                switch error {
                case .invalidComponent, .missingComponent:
                    return .failure(ProxyError(.httpRequestError(status: 400), details: "cannot sign this request for \(target.hostField): \(error)"))
                default:
                    return .failure(ProxyError(.proxyInternalError, details: "cannot sign the request to \(target.hostField): \(error)"))
                }
            } catch {
                return .failure(ProxyError(.proxyInternalError, details: "cannot sign the request to \(target.hostField): \(error)"))
            }
        case .awsSigV4(let aws):
            return aws.sign(head: head, to: target, originTarget: originTarget, hasBody: hasBody, now: now, limits: limits)
        }
    }
}

/// An aws-sigv4 host: how its heads are signed, and where its keys come from.
struct AWSHostSigning: Sendable {
    let signer: AWSHeadSigner
    let keys: AWSKeySource

    func sign(head: [UInt8], to target: UpstreamTarget, originTarget: String, hasBody: Bool, now: Int64,
              limits: Limits) -> Result<HostSigner.Signed, ProxyError> {
        let credentials: AWSCredentials
        switch keys.current() {
        case .success(let keys): credentials = keys
        case .failure(let error): return .failure(error)
        }
        do {
            let prefix = target.parent == nil ? "" : "http://\(target.hostField)"
            let signed = try signer.sign(head: head, credentials: credentials, scheme: target.scheme, authority: target.hostField,
                                         originTarget: originTarget, targetPrefix: prefix, hasBody: hasBody, now: now)
            // One chunk at a time is held, at most `signed_body_bytes` of it.
            let body = signed.payload.isStreaming && hasBody
                ? try AWSChunkedResigner(mode: signed.payload, signed: signed.request, maximumChunkBytes: limits.signedBodyBytes) : nil
            return .success(HostSigner.Signed(head: signed.head, body: body))
        } catch let error as AWSSigningError {
            return .failure(ProxyError(.httpRequestError(status: 400), details: "cannot sign this request for \(target.hostField) with AWS SigV4: \(error)"))
        } catch {
            return .failure(ProxyError(.proxyInternalError, details: "cannot sign the request to \(target.hostField) with AWS SigV4: \(error)"))
        }
    }
}
