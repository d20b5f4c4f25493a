// swift-tools-version: 6.0
// The libFuzzer targets that need the store's modules (which `Tools/Fuzz/run` cannot build with
// swiftc alone: GRDB, swift-crypto). Built by `Tools/Fuzz/run` with
//   swift build --package-path Tools/Fuzz -c release --sanitize=fuzzer --sanitize=address -Xswiftc -enable-testing
// A nested package, so that the fuzz executables stay out of users' dependency graph.
import PackageDescription

let package = Package(
    name: "ListStoreFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "ListStore", path: "../..")],
    targets: [
        .executableTarget(
            name: "fuzz-journal",
            dependencies: [
                .product(name: "ListStoreWire", package: "ListStore"),
                .product(name: "ListStore", package: "ListStore"),
            ],
            path: "Store",
            sources: ["journal.swift"],
            // libFuzzer's `main` calls `LLVMFuzzerTestOneInput`: the file has no top-level code.
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    ],
    swiftLanguageModes: [.v6]
)
