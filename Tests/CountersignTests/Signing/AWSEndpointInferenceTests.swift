import XCTest
@testable import CountersignSigning

/// Region and signing name from the host name, table-tested: what each AWS endpoint family
/// resolves to, and nil where the name says nothing (or is only dressed up as AWS's).
final class AWSEndpointInferenceTests: XCTestCase {
    func testEndpointTable() {
        let table: [(String, String?, String?)] = [
            ("s3.eu-west-1.amazonaws.com", "eu-west-1", "s3"),
            ("bucket.s3.eu-west-1.amazonaws.com", "eu-west-1", "s3"),
            ("my.dotted.bucket.s3.eu-west-1.amazonaws.com", "eu-west-1", "s3"),
            ("bucket.s3.amazonaws.com", "us-east-1", "s3"),
            ("s3.amazonaws.com", "us-east-1", "s3"),
            ("s3.amazonaws.com:443", "us-east-1", "s3"),
            ("S3.EU-WEST-1.AMAZONAWS.COM.", "eu-west-1", "s3"),
            ("s3-eu-west-1.amazonaws.com", "eu-west-1", "s3"),
            ("bucket.s3-external-1.amazonaws.com", "us-east-1", "s3"),
            ("s3-fips.us-east-2.amazonaws.com", "us-east-2", "s3"),
            ("bucket.s3-fips.dualstack.us-east-1.amazonaws.com", "us-east-1", "s3"),
            ("s3.dualstack.eu-west-1.amazonaws.com", "eu-west-1", "s3"),
            ("bucket.s3.dualstack.ap-southeast-2.amazonaws.com", "ap-southeast-2", "s3"),
            ("s3.cn-north-1.amazonaws.com.cn", "cn-north-1", "s3"),
            ("s3.us-gov-west-1.amazonaws.com", "us-gov-west-1", "s3"),
            ("bucket.vpce-1a2b3c4d-5e6f.s3.us-east-1.vpce.amazonaws.com", "us-east-1", "s3"),
            ("iam.amazonaws.com", "us-east-1", "iam"),
            ("sts.amazonaws.com", "us-east-1", "sts"),
            ("sts.eu-west-1.amazonaws.com", "eu-west-1", "sts"),
            ("route53.amazonaws.com", "us-east-1", "route53"),
            ("cloudfront.amazonaws.com", "us-east-1", "cloudfront"),
            ("sqs.eu-west-1.amazonaws.com", "eu-west-1", "sqs"),
            ("dynamodb.us-west-2.amazonaws.com", "us-west-2", "dynamodb"),
            ("streams.dynamodb.us-west-2.amazonaws.com", "us-west-2", "dynamodb"),
            ("dynamodb-fips.us-east-1.amazonaws.com", "us-east-1", "dynamodb-fips"),
            ("a1b2c3d4e5.execute-api.eu-central-1.amazonaws.com", "eu-central-1", "execute-api"),
            ("search-logs-abc123.eu-west-1.es.amazonaws.com", "eu-west-1", "es"),
            ("vpc-logs-abc123.eu-west-1.es.amazonaws.com", "eu-west-1", "es"),
            ("abc123xyz.us-east-1.aoss.amazonaws.com", "us-east-1", "aoss"),
            ("es.eu-west-1.amazonaws.com", "eu-west-1", "es"),
            ("bedrock-runtime.us-east-1.amazonaws.com", "us-east-1", "bedrock"),
            ("bedrock-agent-runtime.us-west-2.amazonaws.com", "us-west-2", "bedrock"),
            ("bedrock.us-east-1.amazonaws.com", "us-east-1", "bedrock"),
            ("email.eu-west-1.amazonaws.com", "eu-west-1", "ses"),
            ("sqs.us-east-1.api.aws", "us-east-1", "sqs"),
            ("lambda.ap-northeast-1.amazonaws.com", "ap-northeast-1", "lambda"),
        ]
        for (host, region, service) in table {
            XCTAssertEqual(AWSEndpointInference.infer(host: host), AWSEndpointInference.Endpoint(region: region, service: service), host)
        }
    }

    /// Names that say nothing, or only pretend to be AWS's.
    func testNamesThatSayNothing() {
        for host in ["minio.internal", "storage.example.com", "s3.amazonaws.com.evil.example", "evil-amazonaws.com",
                     "amazonaws.com", ".amazonaws.com", "a..s3.amazonaws.com", "localhost:9000", "[::1]:9000", "127.0.0.1"] {
            XCTAssertNil(AWSEndpointInference.infer(host: host), host)
        }
    }

    /// A global name in China names no region (the partition has no us-east-1).
    func testChineseGlobalNameHasNoRegion() {
        XCTAssertEqual(AWSEndpointInference.infer(host: "iam.amazonaws.com.cn"), AWSEndpointInference.Endpoint(region: nil, service: "iam"))
    }
}

/// The precedence of item 4: configuration, host name, client's credential scope — each of
/// region and service on its own.
final class AWSScopeResolverTests: XCTestCase {
    let client = AWSCredentialScope(date: "20260101", region: "us-west-2", service: "s3")

    func testPrecedence() throws {
        XCTAssertEqual(try AWSScopeResolver.resolve(configuredRegion: "eu-north-1", configuredService: "s3", host: "s3.eu-west-1.amazonaws.com", client: client),
                       AWSResolvedScope(region: "eu-north-1", regionSource: .configuration, service: "s3", serviceSource: .configuration))
        XCTAssertEqual(try AWSScopeResolver.resolve(configuredRegion: nil, configuredService: nil, host: "s3.eu-west-1.amazonaws.com", client: client),
                       AWSResolvedScope(region: "eu-west-1", regionSource: .hostName, service: "s3", serviceSource: .hostName))
        XCTAssertEqual(try AWSScopeResolver.resolve(configuredRegion: nil, configuredService: nil, host: "minio.internal:9000", client: client),
                       AWSResolvedScope(region: "us-west-2", regionSource: .clientScope, service: "s3", serviceSource: .clientScope))
        // A global name without a region in China: service from the name, region from the client.
        XCTAssertEqual(try AWSScopeResolver.resolve(configuredRegion: nil, configuredService: nil, host: "iam.amazonaws.com.cn",
                                                    client: AWSCredentialScope(date: "20260101", region: "cn-north-1", service: "iam")),
                       AWSResolvedScope(region: "cn-north-1", regionSource: .clientScope, service: "iam", serviceSource: .hostName))
    }

    func testNothingToGoOnIsAClearRefusal() {
        XCTAssertThrowsError(try AWSScopeResolver.resolve(configuredRegion: nil, configuredService: "s3", host: "minio.internal", client: nil)) { error in
            XCTAssertEqual("\(error)", "invalid AWS credential scope: neither the configuration, the host name nor the client's signature gives the region for minio.internal: set sign.region")
        }
    }
}
