import ListDiff
import ListStore
import ListSync

/// A source that notes the answer of every push sent through it, so that `sync --follow` reports
/// the pushes of each round (`Replica.follow` hears only of its pulls). Everything else goes to the
/// source as it is.
struct PushRecordingSource: ListSource {
    /// The source.
    let base: any ListSource
    private let answers = _Locked([PushAnswer]())

    init(_ base: any ListSource) {
        self.base = base
    }

    /// The answers noted since the last call, oldest first.
    func takeAnswers() -> [PushAnswer] {
        answers.withLock { answers in
            defer { answers = [] }
            return answers
        }
    }

    func push(_ push: Push, to list: String) async throws -> PushAnswer {
        let answer = try await base.push(push, to: list)
        answers.withLock { $0.append(answer) }
        return answer
    }

    func identity() async throws -> StoreIdentity { try await base.identity() }

    func summary(of list: String) async throws -> ListSummary { try await base.summary(of: list) }

    func journal(of list: String, after version: Int, limit: Int) async throws -> JournalPage {
        try await base.journal(of: list, after: version, limit: limit)
    }

    func snapshot(of list: String, at version: Int?) async throws -> ListSnapshot {
        try await base.snapshot(of: list, at: version)
    }

    func catchUp(of list: String, from version: Int, applyingTo state: [ListSection]) async throws
        -> (changeset: ListChangeset, head: ListSnapshot)
    {
        try await base.catchUp(of: list, from: version, applyingTo: state)
    }

    func waitForCommit(to list: String, after version: Int, timeout: Duration) async throws -> Bool {
        try await base.waitForCommit(to: list, after: version, timeout: timeout)
    }

    func acknowledge(consumer name: String, of list: String, version: Int) async throws {
        try await base.acknowledge(consumer: name, of: list, version: version)
    }

    func pushes(from client: String, to list: String, seqs: ClosedRange<Int>) async throws -> [PushAnswer] {
        try await base.pushes(from: client, to: list, seqs: seqs)
    }
}
