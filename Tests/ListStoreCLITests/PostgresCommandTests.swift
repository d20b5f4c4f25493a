import Foundation
import ListJSON
import ListStorePostgresTestSupport
import Testing

/// The store commands with `--db postgres://…` and `LISTSTORE_DB`, as a user runs them.
@Suite(
    .serialized, .blockingWaits,
    .enabled(if: PostgresTestEnvironment.url != nil, Comment(rawValue: PostgresTestEnvironment.reason)))
struct PostgresCommandTests {
    @Test func storeCommandsTakeADatabaseURL() async throws {
        try await PostgresTestDatabase.withFresh { database in
            let url = database.url
            try await CLIRunner.offPool {
                let dir = try TemporaryDirectory()
                // A command that only reads neither creates a store in an empty database nor
                // succeeds.
                let empty = try CLIRunner.run(["lists", "--db", url])
                #expect(empty.status == 66, "\(empty.stderr)")

                let first = try dir.file("v1.json", #"{"sections":[{"id":"s","content":1,"elements":[{"id":"a","content":"x"}]}]}"#)
                let second = try dir.file("v2.json", #"{"sections":[{"id":"s","content":1,"elements":[{"id":"b","content":"y"},{"id":"a","content":"x"}]}]}"#)
                #expect(try CLIRunner.run(["commit", "--db", url, "--list", "l", "--file", first]).status == 0)
                // LISTSTORE_DB stands in for --db.
                let environment = ["LISTSTORE_DB": url]
                #expect(try CLIRunner.run(["commit", "--list", "l", "--file", second, "--expect-version", "1"], environment: environment).status == 0)
                let conflict = try CLIRunner.run(["commit", "--list", "l", "--file", first, "--expect-version", "1"], environment: environment)
                #expect(conflict.status == 75 && conflict.stderr.contains("version conflict"))

                let show = try CLIRunner.run(["show", "--db", url, "--list", "l", "--json"])
                #expect(show.status == 0)
                #expect(try show.object()["version"]?.intValue == 2)
                let lists = try CLIRunner.run(["lists", "--json"], environment: environment)
                #expect(lists.status == 0 && lists.stdout.contains(#""name":"l""#))
                let log = try CLIRunner.run(["log", "--db", url, "--list", "l", "--json"])
                #expect(log.status == 0 && log.stdout.contains(#""version":2"#))
                let diff = try CLIRunner.run(["diff", "--list", "l", "--from-version", "1", "--json"], environment: environment)
                #expect(diff.status == 0 && diff.stdout.contains("elementInserted"), "\(diff.stderr)")
                #expect(try CLIRunner.run(["verify", "--db", url]).status == 0)
                // TLS required of a server that does not offer it (the test server does not): the
                // reason, in one line, not postgres-nio's generic description.
                let tls = try CLIRunner.run(["lists", "--db", url + "?sslmode=require"])
                #expect(tls.status == 74 && tls.stderr.contains("does not offer TLS"), "\(tls.stderr)")

                // A replica pulls from the database directly, registers as a consumer, and pushes
                // an offline change back.
                let replica = dir.url.appendingPathComponent("replica.liststore").path
                let pull = try CLIRunner.run(["pull", "--db", url, "--list", "l", "--replica", replica, "--as", "laptop", "--json"])
                #expect(pull.status == 0, "\(pull.stderr)")
                #expect(try pull.object()["version"]?.intValue == 2)
                let consumers = try CLIRunner.run(["consumers", "--db", url, "--list", "l", "--json"])
                #expect(consumers.stdout.contains(#""name":"laptop""#) && consumers.stdout.contains(#""version":2"#))
                let third = try dir.file("v3.json", #"{"sections":[{"id":"s","content":1,"elements":[{"id":"a","content":"x"}]}]}"#)
                #expect(try CLIRunner.run(["commit", "--db", replica, "--list", "l", "--file", third]).status == 0)
                let push = try CLIRunner.run(["push", "--db", url, "--list", "l", "--replica", replica])
                #expect(push.status == 0, "\(push.stderr)")
                let head = try CLIRunner.run(["show", "--db", url, "--list", "l", "--json"])
                #expect(try head.object()["version"]?.intValue == 3)
                #expect(!head.stdout.contains(#""id":"b""#))

                // Pruning keeps what the consumer needs; a file-only command says it is one.
                let prune = try CLIRunner.run(["prune", "--db", url, "--list", "l", "--keep-last", "0", "--json"])
                #expect(prune.status == 0 && prune.stdout.contains(#""heldBy":["laptop"]"#), "\(prune.stdout)")
                let status = try CLIRunner.run(["status", "--db", url])
                #expect(status.status == 0 && status.stdout.contains("No replica lists"), "\(status.stderr)")
                let notReplica = try CLIRunner.run(["status", "--db", url, "--list", "l"])
                #expect(notReplica.status == 65 && notReplica.stderr.contains("is not a replica"))
            }
        }
    }

    /// A list of a PostgreSQL store is a replica of a SQLite store: pulled, written offline with
    /// `commit --db URL`, pushed and synced, with `status` and `verify`, as a file replica is.
    @Test func aPostgreSQLListIsAReplica() async throws {
        try await PostgresTestDatabase.withFresh { database in
            let url = database.url
            try await CLIRunner.offPool {
                let dir = try TemporaryDirectory()
                let source = dir.url.appendingPathComponent("source.liststore").path
                let first = try dir.file("v1.json", #"{"sections":[{"id":"s","content":1,"elements":[{"id":"a","content":"x"}]}]}"#)
                #expect(try CLIRunner.run(["commit", "--db", source, "--list", "l", "--file", first]).status == 0)

                let pull = try CLIRunner.run(["pull", "--db", source, "--list", "l", "--replica", url, "--json"])
                #expect(pull.status == 0, "\(pull.stderr)")
                #expect(try pull.object()["version"]?.intValue == 1)
                #expect(try CLIRunner.run(["pull", "--db", url, "--list", "l", "--replica", url]).status == 64)

                // Offline: a commit to the replica is a local change.
                let local = try dir.file("local.json", #"{"sections":[{"id":"s","content":1,"elements":[{"id":"a","content":"x"},{"id":"c","content":"z"}]}]}"#)
                #expect(try CLIRunner.run(["commit", "--db", url, "--list", "l", "--file", local]).status == 0)
                // Meanwhile at the source.
                let remote = try dir.file("remote.json", #"{"sections":[{"id":"s","content":1,"elements":[{"id":"b","content":"y"},{"id":"a","content":"x"}]}]}"#)
                #expect(try CLIRunner.run(["commit", "--db", source, "--list", "l", "--file", remote]).status == 0)
                let pending = try CLIRunner.run(["status", "--db", url, "--list", "l", "--json"])
                #expect(pending.status == 0 && pending.stdout.contains(#""pending":1"#), "\(pending.stdout) \(pending.stderr)")

                let sync = try CLIRunner.run(["sync", "--db", source, "--list", "l", "--replica", url, "--json"])
                #expect(sync.status == 0, "\(sync.stderr)")
                let mine = try CLIRunner.run(["show", "--db", url, "--list", "l", "--json"])
                let theirs = try CLIRunner.run(["show", "--db", source, "--list", "l", "--json"])
                #expect(try mine.object()["digest"] == theirs.object()["digest"])
                #expect(theirs.stdout.contains(#""id":"b""#) && theirs.stdout.contains(#""id":"c""#))
                let synced = try CLIRunner.run(["status", "--db", url, "--json"])
                #expect(synced.stdout.contains(#""pending":0"#), "\(synced.stdout)")
                let nothing = try CLIRunner.run(["push", "--db", source, "--list", "l", "--replica", url])
                #expect(nothing.status == 0 && nothing.stdout.contains("nothing to push"), "\(nothing.stdout)")
                #expect(try CLIRunner.run(["verify", "--db", url]).status == 0)
            }
        }
    }
}
