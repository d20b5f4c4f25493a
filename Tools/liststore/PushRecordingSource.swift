import ListStore
import ListSync

/// A source that notes the answer of every push sent through it, so that `sync --follow` reports
/// the pushes of each round (`Replica.follow` hears only of its pulls). Everything else goes to the
/// source as it is.
struct PushRecordingSource: _ForwardingSource {
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
}
