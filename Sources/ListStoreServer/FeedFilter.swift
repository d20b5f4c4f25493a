import ListStoreCore

/// Which lists a store feed request follows (`GET /v1/changes`, `GET /v1/events`): those its
/// pattern matches that its token may read under the access rules in force. Each list's answer is
/// kept until the rules change, so that a pattern and the rules are matched once per list, not
/// once per event, and a costly pattern delays no other follower's events again.
final class FeedFilter: Sendable {
    /// The most lists whose answers are kept; when full, all are forgotten.
    static let capacity = 4096

    private let pattern: ListPattern
    /// The user's token (`nil` for the service token, which reads every list).
    private let token: AccessToken?
    private let state: ServerState
    private let kept = _Locked(Kept())

    /// The answers kept, and the generation of the access rules they were found under, with the
    /// token as those rules accept it (`nil`: they refuse it).
    private struct Kept {
        var generation: UInt64?
        var token: AccessToken?
        var lists: [String: Bool] = [:]
    }

    /// The lists of `pattern` that `token` (`nil`: the service token) may read, under the rules
    /// `state` holds.
    init(pattern: ListPattern, token: AccessToken?, state: ServerState) {
        self.pattern = pattern
        self.token = token
        self.state = state
    }

    /// Whether the request follows `list`.
    /// - Complexity: O(length of `list`) once its answer is kept; the first time (and after the rules
    ///   change), the cost of matching the pattern and the rules (see `ListPattern`).
    func includes(_ list: String) -> Bool {
        let (access, generation) = state.accessInForce
        let (known, accepted) = kept.withLock { kept -> (Bool?, AccessToken?) in
            refresh(&kept, access: access, generation: generation)
            return (kept.lists[list], kept.token)
        }
        if let known { return known }
        let included = pattern.matches(list) && (token == nil || accepted.map { access?.grant(on: list, to: $0) != nil } ?? false)
        kept.withLock { kept in
            guard kept.generation == generation else { return }
            if kept.lists.count >= Self.capacity { kept.lists.removeAll(keepingCapacity: true) }
            kept.lists[list] = included
        }
        return included
    }

    /// Whether the access rules in force refuse the token (its key went, or its issuer or
    /// audience is no longer the server's): the request reads nothing, and a stream ends.
    /// - Complexity: that of `AccessConfiguration.recheck(_:now:)` once per change of the rules.
    var isRefused: Bool {
        guard token != nil else { return false }
        let (access, generation) = state.accessInForce
        return kept.withLock { kept in
            refresh(&kept, access: access, generation: generation)
            return kept.token == nil
        }
    }

    /// Forgets what was kept under other rules than those of `generation`, and checks the token again.
    private func refresh(_ kept: inout Kept, access: AccessConfiguration?, generation: UInt64) {
        guard kept.generation != generation else { return }
        kept.generation = generation
        kept.lists.removeAll()
        kept.token = token.flatMap { try? access?.recheck($0) }
    }
}
