// swift-tools-version:6.0
import PackageDescription

// One module per area of Sources/Countersign/, so each compiles and is tested on its own
// and the dependency direction stays visible: the protocol core (HTTP, Auth, Trust, Config)
// knows nothing of sockets; only Proxy talks to libevent.
// Release builds drop the dynamic exclusivity checks: swift_beginAccess/endAccess were ~4% of the
// instructions of a plain forwarded request (callgrind). Debug builds, which the tests run, keep
// them, so an overlapping access is still caught there.
let cSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v5),
    .unsafeFlags(["-enforce-exclusivity=unchecked", "-cross-module-optimization"], .when(configuration: .release)),
]

let package = Package(
    name: "Countersign",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "countersign", targets: ["countersign"]),
    ],
    targets: [
        // Two C modules, so that Auth, Trust, Interception and Support see OpenSSL but not libevent
        // (Tests/CountersignTests/Support/ModuleBoundaryTests.swift keeps it that way).
        .target(
            name: "COpenSSL",
            path: "Sources/COpenSSL",
            linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]),
        .target(
            name: "CLibevent",
            dependencies: ["COpenSSL"],
            path: "Sources/CLibevent",
            linkerSettings: [
                .linkedLibrary("event_core"), .linkedLibrary("event_extra"),
                .linkedLibrary("event_openssl"), .linkedLibrary("event_pthreads"),
            ]),
        // One of each small helper (Base64, hex, SHA-256, the OpenSSL error queue, the lock type).
        .target(name: "CountersignSupport", dependencies: ["COpenSSL"], path: "Sources/Countersign/Support", swiftSettings: cSettings),
        .target(name: "CountersignLog", dependencies: ["CountersignSupport"], path: "Sources/Countersign/Log", swiftSettings: cSettings),
        .target(name: "CountersignHTTP", dependencies: [], path: "Sources/Countersign/HTTP", swiftSettings: cSettings),
        .target(name: "CountersignConfig", dependencies: ["CountersignLog", "CountersignSupport", "CountersignHTTP"], path: "Sources/Countersign/Config", swiftSettings: cSettings),
        .target(name: "CountersignAuth", dependencies: ["COpenSSL", "CountersignSupport", "CountersignHTTP"], path: "Sources/Countersign/Auth", swiftSettings: cSettings),
        .target(name: "CountersignTrust", dependencies: ["COpenSSL", "CountersignSupport"], path: "Sources/Countersign/Trust", swiftSettings: cSettings),
        .target(name: "CountersignInterception", dependencies: ["COpenSSL", "CountersignSupport", "CountersignTrust"], path: "Sources/Countersign/Interception", swiftSettings: cSettings),
        .target(name: "CountersignSigning", dependencies: ["COpenSSL", "CountersignSupport", "CountersignHTTP", "CountersignAuth", "CountersignTrust"], path: "Sources/Countersign/Signing", swiftSettings: cSettings),
        .target(name: "CountersignAdmin", dependencies: ["CountersignLog"], path: "Sources/Countersign/Admin", swiftSettings: cSettings),
        .target(
            name: "CountersignProxy",
            dependencies: ["CLibevent", "COpenSSL", "CountersignSupport", "CountersignHTTP", "CountersignConfig", "CountersignAuth",
                           "CountersignTrust", "CountersignInterception", "CountersignAdmin", "CountersignLog", "CountersignSigning"],
            path: "Sources/Countersign/Proxy", swiftSettings: cSettings),
        .executableTarget(
            name: "countersign",
            dependencies: ["CountersignProxy", "CountersignConfig", "CountersignTrust", "CountersignInterception", "CountersignLog"],
            path: "Sources/countersign", swiftSettings: cSettings),
        // x509-limbo harness (Tests/limbo/run.py): the trust policy against C2SP's path-validation suite.
        .executableTarget(name: "limbo-harness", dependencies: ["CountersignTrust"], path: "Sources/limbo-harness", swiftSettings: cSettings),
        .testTarget(name: "SupportTests", dependencies: ["CountersignSupport"], path: "Tests/CountersignTests/Support", swiftSettings: cSettings),
        .testTarget(name: "LogTests", dependencies: ["CountersignLog"], path: "Tests/CountersignTests/Log", swiftSettings: cSettings),
        .testTarget(name: "HTTPTests", dependencies: ["CountersignHTTP"], path: "Tests/CountersignTests/HTTP", exclude: ["hpack-test-case"], swiftSettings: cSettings),
        .testTarget(name: "ConfigTests", dependencies: ["CountersignConfig"], path: "Tests/CountersignTests/Config", swiftSettings: cSettings),
        .testTarget(name: "AuthTests", dependencies: ["CountersignAuth", "CountersignSupport"], path: "Tests/CountersignTests/Auth", swiftSettings: cSettings),
        .testTarget(name: "TrustTests", dependencies: ["CountersignTrust", "CountersignSupport"], path: "Tests/CountersignTests/Trust", swiftSettings: cSettings),
        .testTarget(name: "InterceptionTests", dependencies: ["CountersignInterception", "CountersignSupport"], path: "Tests/CountersignTests/Interception", swiftSettings: cSettings),
        .testTarget(name: "SigningTests", dependencies: ["CountersignSigning", "CountersignSupport"], path: "Tests/CountersignTests/Signing", exclude: ["structured-field-tests", "rfc9421", "aws-signing-test-suite", "aws-botocore"], swiftSettings: cSettings),
        .testTarget(name: "ProxyTests", dependencies: ["CountersignProxy", "CountersignConfig", "CountersignAuth", "CLibevent"], path: "Tests/ProxyTests", swiftSettings: cSettings),
    ]
)
