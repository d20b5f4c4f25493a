// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "ListStore",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "ListDiff", targets: ["ListDiff"]),
        .library(name: "ListJSON", targets: ["ListJSON"]),
        .executable(name: "liststore", targets: ["ListStoreCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // Pure algorithm: no Foundation, no SQLite.
        .target(name: "ListDiff"),
        // The JSON formats of DESIGN §3: exact JSON values, snapshot documents, stage objects.
        .target(name: "ListJSON", dependencies: ["ListDiff"]),
        .executableTarget(
            name: "ListStoreCLI",
            dependencies: [
                "ListDiff", "ListJSON",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/liststore"
        ),
        // Test support (not a product): an independent batch-update validator and generators.
        .target(name: "ListDiffTestSupport", dependencies: ["ListDiff"], path: "Tests/ListDiffTestSupport"),
        .testTarget(name: "ListDiffTests", dependencies: ["ListDiff", "ListDiffTestSupport"]),
        .testTarget(name: "ListJSONTests", dependencies: ["ListJSON", "ListDiff", "ListDiffTestSupport"]),
        .testTarget(name: "ListStoreCLITests", dependencies: ["ListStoreCLI", "ListJSON"]),
    ],
    swiftLanguageModes: [.v6]
)
