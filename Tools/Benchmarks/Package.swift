// swift-tools-version: 6.0
// Benchmarks for ListStore (Docs/Benchmarks.md). A nested package, so that the benchmark executable stays out
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
        // The store scenarios' baselines: the SQLite C API (GRDBSQLite) and SHA-256 (Crypto), the same
        // packages the store uses.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        // http-followers: the journal server's logger.
        .package(url: "https://github.com/apple/swift-log", from: "1.11.0"),
        // pg-commit-1pct: its baseline writes the same rows with postgres-nio directly.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "liststore-bench",
            dependencies: [
                .product(name: "ListDiff", package: "ListStore"),
                .product(name: "ListMerge", package: "ListStore"),
                .product(name: "ListStore", package: "ListStore"),
                .product(name: "ListSync", package: "ListStore"),
                .product(name: "ListStoreServer", package: "ListStore"),
                .product(name: "ListStorePostgres", package: "ListStore"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                "CEpoll",
            ]
        ),
        // sys/epoll.h for http-followers' and pg-followers' follower pool on Linux.
        .target(name: "CEpoll"),
    ],
    swiftLanguageModes: [.v6]
)
