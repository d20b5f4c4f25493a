// swift-tools-version: 6.0
// Benchmarks for ListStore (DESIGN §6). A nested package, so that the benchmark executable stays out
// of users' dependency graph. Run with:
//   swift run -c release --package-path Tools/Benchmarks liststore-bench [SCENARIO…] [--json]
import PackageDescription

let package = Package(
    name: "ListStoreBenchmarks",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "liststore-bench", targets: ["liststore-bench"]),
    ],
    dependencies: [
        .package(name: "ListStore", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "liststore-bench",
            dependencies: [.product(name: "ListDiff", package: "ListStore")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
