/// What a follower with a `RetryPolicy` says about its connection to the source (see
/// `Replica.follow(from:options:wait:retrying:onEvent:onPull:)`).
public enum FollowEvent: Sendable {
    /// A transient failure (`SyncError.isTransient`): the follower waits `delay`, then tries again.
    /// `attempt` counts the failures of this outage, from 1.
    case retrying(after: SyncError, attempt: Int, delay: Duration)
    /// The source answered a pull again after `failures` failed attempts.
    case reconnected(failures: Int)
}
