// swift-tools-version: 6.0
import PackageDescription

/// The platforms without URLSession's own networking stack: there, ListSync's HTTP client is
/// AsyncHTTPClient (SwiftNIO).
let nonApple: [Platform] = [.linux, .android, .windows, .openbsd]

let package = Package(
    name: "ListStore",
    // The observable models of ListSync (ReplicaListModel, TypedReplicaListModel, ReplicaSetModel)
    // need the Observation framework: macOS 14, iOS 17, tvOS 17, watchOS 10 (`@available`).
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    // An app links ListStore (its local store) and ListSync (sync; it brings ListStore), and imports
    // nothing else. ListDiff alone is the staged diff; ListStoreServer and ListStorePostgres are for
    // servers; the rest are the modules those are made of.
    products: [
        .library(name: "ListDiff", targets: ["ListDiff"]),
        .library(name: "ListJSON", targets: ["ListJSON"]),
        .library(name: "ListMerge", targets: ["ListMerge"]),
        .library(name: "ListStoreCore", targets: ["ListStoreCore"]),
        .library(name: "ListStore", targets: ["ListStore"]),
        .library(name: "ListStoreWire", targets: ["ListStoreWire"]),
        .library(name: "ListSync", targets: ["ListSync"]),
        .library(name: "ListStoreServer", targets: ["ListStoreServer"]),
        .library(name: "ListStorePostgres", targets: ["ListStorePostgres"]),
        .executable(name: "liststore", targets: ["ListStoreCLI"]),
        .executable(name: "liststore-server", targets: ["ListStoreServerTool"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.11.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.25.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
        // The journal server's users: their JWTs verified against a JWKS document.
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.0.0"),
        // HTTPSource's requests off Apple platforms (see the ListSync target).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.24.0"),
        // `swift package generate-documentation`: the DocC catalogs, built in CI.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        // Pure algorithm: no Foundation, no SQLite.
        .target(name: "ListDiff"),
        // The JSON formats (Docs/Formats.md): exact JSON values, snapshot documents, stage objects.
        .target(name: "ListJSON", dependencies: ["ListDiff"]),
        // Offline writes (ListMerge's "Offline Writes and Conflicts"): intents from two snapshots, their
        // rebase onto a head, the conflict report. Pure: no Foundation, no SQLite.
        .target(name: "ListMerge", dependencies: ["ListDiff", "ListJSON"]),
        // The SQL schema: Migrations/*.sql, embedded in the code at build time.
        .target(
            name: "ListStoreMigrations",
            dependencies: ["ListStoreCore", .product(name: "Crypto", package: "swift-crypto")],
            path: "Migrations",
            resources: [
                .embedInCode("v0001_initial.sql"), .embedInCode("v0002_sync.sql"), .embedInCode("v0003_offline.sql"),
                .embedInCode("v0004_stored_snapshots.sql"), .embedInCode("v0005_push_identity.sql"),
                .embedInCode("v0006_store_feed.sql"), .embedInCode("v0007_replica_sets.sql"), .embedInCode("v0008_push_retention.sql"),
                .embedInCode("v0009_deleted_sections.sql"), .embedInCode("v0010_list_identity.sql"), .embedInCode("v0011_paged_sync.sql"),
                .embedInCode("v0012_large_rows.sql"),
                .embedInCode("v0013_element_records.sql"),
                .embedInCode("v0014_staging_lists.sql"),
                .embedInCode("v0015_blobs.sql"),
                .embedInCode("v0016_blob_use.sql"),
                // The same store on PostgreSQL (ListStorePostgres): one schema for SQLite's v0001–v0003,
                // then v0002 as SQLite's v0004, v0003 as its v0005, v0004 as its v0006, v0005 as its v0007, v0006 as its v0008, v0007 as its v0009, v0008 as its v0010, v0009 as its v0011, v0010 as its v0014, v0011 as its v0015, v0012 as its v0016.
                .embedInCode("postgres/v0001_postgres_initial.sql"), .embedInCode("postgres/v0002_postgres_stored_snapshots.sql"),
                .embedInCode("postgres/v0003_postgres_push_identity.sql"),
                .embedInCode("postgres/v0004_postgres_store_feed.sql"), .embedInCode("postgres/v0005_postgres_replica_sets.sql"),
                .embedInCode("postgres/v0006_postgres_push_retention.sql"), .embedInCode("postgres/v0007_postgres_deleted_sections.sql"),
                .embedInCode("postgres/v0008_postgres_list_identity.sql"), .embedInCode("postgres/v0009_postgres_paged_sync.sql"),
                .embedInCode("postgres/v0010_postgres_staging_lists.sql"), .embedInCode("postgres/v0011_postgres_blobs.sql"),
                .embedInCode("postgres/v0012_postgres_blob_use.sql"),
            ]
        ),
        // The store without an engine: its types (items, snapshots, journal entries, pushes, errors),
        // the engine contract (ListStoreEngine, ReplicaStore), and what both engines compute alike
        // (commit plans and rows, digests, replay checks). Links neither SQLite nor PostgreSQL.
        .target(
            name: "ListStoreCore",
            dependencies: [
                "ListDiff", "ListJSON", "ListMerge",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Lists persisted in SQLite with a journal of staged changesets (re-exports ListStoreCore).
        .target(
            name: "ListStore",
            dependencies: [
                "ListDiff", "ListJSON", "ListMerge", "ListStoreCore", "ListStoreMigrations",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The documents of the journal over HTTP (Docs/Formats.md), shared by the server and its clients.
        .target(name: "ListStoreWire", dependencies: ["ListJSON", "ListMerge", "ListStoreCore"]),
        // Consumers: cursors, live changes, replicas, resync.
        .target(
            name: "ListSync",
            dependencies: [
                "ListDiff", "ListJSON", "ListMerge", "ListStore", "ListStoreWire",
                // HTTPSource's client off Apple platforms; on them it is URLSession, and an app
                // importing ListSync links no NIO and no BoringSSL.
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: nonApple)),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: nonApple)),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: nonApple)),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: nonApple)),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: nonApple)),
            ]),
        .executableTarget(
            name: "ListStoreCLI",
            dependencies: [
                "ListDiff", "ListJSON", "ListMerge", "ListStore", "ListStorePostgres", "ListStoreWire", "ListSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                // Blobs' files, read and written a piece at a time.
                .product(name: "_NIOFileSystem", package: "swift-nio"),
            ],
            path: "Tools/liststore"
        ),
        // The journal over HTTP (Hummingbird): a target of its own, so that the libraries and the
        // `liststore` command do not build an HTTP server; `liststore serve` runs `liststore-server`.
        .target(
            name: "ListStoreServer",
            dependencies: [
                "ListDiff", "ListJSON", "ListStoreCore", "ListStoreWire",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            // The HTTP API's OpenAPI 3.1 document, served at /v1/openapi.json.
            resources: [.embedInCode("openapi.json")]
        ),
        // The store contract on PostgreSQL (postgres-nio); SQLite stays the default engine.
        .target(
            name: "ListStorePostgres",
            dependencies: [
                "ListDiff", "ListJSON", "ListMerge", "ListStoreCore", "ListStoreMigrations",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "ListStoreServerTool",
            dependencies: [
                "ListStore", "ListStorePostgres", "ListStoreServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            path: "Tools/liststore-server"
        ),
        // Test support (not a product): an independent batch-update validator and generators.
        .target(name: "ListDiffTestSupport", dependencies: ["ListDiff"], path: "Tests/ListDiffTestSupport"),
        .target(
            name: "ListStorePostgresTestSupport",
            dependencies: [
                "ListStorePostgres", "ListStore", "ListStoreTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/ListStorePostgresTestSupport"),
        .target(
            name: "ListStoreTestSupport", dependencies: ["ListStore", "ListDiff", "ListJSON", "ListDiffTestSupport"],
            path: "Tests/ListStoreTestSupport"),
        // The Swift examples of README.md and the DocC articles, compiled (Tools/doc-examples); they
        // show values as playgrounds do, hence no warnings.
        .executableTarget(name: "doc-examples", path: "Tools/doc-examples"),
        .plugin(name: "DocExamples", capability: .buildTool(), dependencies: ["doc-examples"]),
        .testTarget(
            name: "DocExamplesTests",
            dependencies: [
                "ListStore", "ListSync", "ListStoreServer", "ListStorePostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: [.unsafeFlags(["-suppress-warnings"])],
            plugins: ["DocExamples"]
        ),
        .testTarget(name: "ListDiffTests", dependencies: ["ListDiff", "ListDiffTestSupport"]),
        .testTarget(name: "ListJSONTests", dependencies: ["ListJSON", "ListDiff", "ListDiffTestSupport"]),
        .testTarget(name: "ListMergeTests", dependencies: ["ListMerge", "ListJSON", "ListDiff", "ListDiffTestSupport"]),
        .testTarget(
            name: "ListStoreTests",
            dependencies: [
                "ListStore", "ListStoreCore", "ListDiff", "ListJSON", "ListMerge", "ListDiffTestSupport", "ListStoreTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "ListSyncTests",
            dependencies: [
                "ListSync", "ListStoreWire", "ListStore", "ListMerge", "ListJSON", "ListDiff", "ListDiffTestSupport",
                "ListStoreTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        .testTarget(
            name: "ListStoreCLITests",
            dependencies: [
                "ListStoreCLI", "ListStoreServerTool", "ListStore", "ListSync", "ListJSON", "ListDiff", "ListDiffTestSupport",
                "ListStoreTestSupport", "ListStorePostgresTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                // Users' tokens (HS256) for the replica sets' process test.
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // Runs against the PostgreSQL server named by LISTSTORE_TEST_POSTGRES (`.ci/run` starts one).
        .testTarget(
            name: "ListStorePostgresTests",
            dependencies: [
                "ListStorePostgres", "ListStore", "ListDiff", "ListJSON", "ListMerge", "ListSync", "ListDiffTestSupport",
                "ListStoreTestSupport", "ListStorePostgresTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ListStoreServerTests",
            dependencies: [
                "ListStoreServer", "ListStoreServerTool", "ListStore", "ListStoreWire", "ListSync", "ListJSON", "ListDiff",
                "ListDiffTestSupport", "ListStoreTestSupport", "ListStorePostgres", "ListStorePostgresTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
