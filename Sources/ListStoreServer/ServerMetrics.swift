import Foundation
import ListStoreCore
import Metrics
import Prometheus

/// The figures a `JournalServer` keeps, through swift-metrics, in a Prometheus registry of its own
/// (so that several servers in one process keep theirs apart), for `GET /metrics`. The metrics:
/// RunningAServer.md, “Metrics”. The per-list gauges cover the first `maxListsShown` lists by name,
/// so a store of many lists does not make a scrape as large as the store.
final class ServerMetrics: Sendable {
    /// Where every figure is kept.
    let registry = PrometheusCollectorRegistry()
    /// swift-metrics' way into `registry`.
    let factory: PrometheusMetricsFactory
    /// The most lists whose gauges a scrape reads and writes: 200 (tests of the bound set fewer).
    var maxListsShown: Int {
        get { listsShownBound.withLock { $0 } }
        set { listsShownBound.withLock { $0 = newValue } }
    }
    private let listsShownBound = _Locked(200)
    /// The lists whose gauges the last scrape wrote.
    private let shownLists = _Locked(Set<String>())

    let commitDuration: Metrics.Timer
    let mergeDuration: Metrics.Timer

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(500), .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .seconds(2.5), .seconds(5), .seconds(10), .seconds(30), .seconds(60),
        ]
        self.factory = factory
        commitDuration = Metrics.Timer(label: "liststore_commit_duration_seconds", factory: factory)
        mergeDuration = Metrics.Timer(label: "liststore_merge_duration_seconds", factory: factory)
    }

    /// The request metrics made so far, by method, route and status: a server of 10,000 followers
    /// answers that many requests per commit, and making a metric is a lookup in the registry.
    private let requestMetrics = _Locked([RequestKey: (count: Metrics.Counter, duration: Metrics.Timer)]())

    private struct RequestKey: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    /// Counts an answered request and records how long it took.
    func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        let key = RequestKey(method: method, route: route, status: status)
        let metrics = requestMetrics.withLock { made in
            if let metrics = made[key] { return metrics }
            let metrics = (
                count: Metrics.Counter(
                    label: "liststore_http_requests_total", dimensions: [("method", method), ("route", route), ("status", String(status))],
                    factory: factory),
                duration: Metrics.Timer(
                    label: "liststore_http_request_duration_seconds", dimensions: [("method", method), ("route", route)], factory: factory)
            )
            made[key] = metrics
            return metrics
        }
        metrics.count.increment()
        metrics.duration.record(duration: duration)
    }

    /// Runs `body` and records how long it took in `timer`, whether it returned or threw.
    func timing<T>(_ timer: Metrics.Timer, _ body: () async throws -> T) async rethrows -> T {
        let start = ContinuousClock.now
        defer { timer.record(duration: ContinuousClock.now - start) }
        return try await body()
    }

    /// Reads the gauges and returns every figure in Prometheus's text format. A failed read of the
    /// store leaves its gauges as they were and counts in `liststore_metrics_store_read_errors_total`.
    func scrape(store: any ListStoreEngine, state: ServerState, watcher: HeadWatcher) async -> [UInt8] {
        gauge("liststore_open_connections").record(state.connections.current)
        gauge("liststore_waiting_followers").record(state.streams.current)
        gauge("liststore_waits_at_head").record(watcher.waitingCount)
        gauge("liststore_merges_in_progress").record(state.mergesInProgress)
        do {
            gauge("liststore_store_size_bytes").record(try await store.sizeInBytes())
            let lists = try await store.lists()
            gauge("liststore_lists").record(lists.count)
            let shown = lists.sorted(by: { $0.name < $1.name }).prefix(maxListsShown)
            let shownNames = Set(shown.map(\.name))
            // The gauges of lists no longer shown (deleted, or pushed past the first by new names)
            // go, rather than stay at their last values.
            let gone = shownLists.withLock { before in
                defer { before = shownNames }
                return before.subtracting(shownNames)
            }
            for list in gone {
                gauge("liststore_list_head_version", [("list", list)]).destroy()
                gauge("liststore_journal_lag_versions", [("list", list)]).destroy()
            }
            for summary in shown {
                let labels = [("list", summary.name)]
                gauge("liststore_list_head_version", labels).record(summary.version)
                let consumers = try await store.consumers(of: summary.name)
                let slowest = consumers.map(\.version).min() ?? summary.version
                gauge("liststore_journal_lag_versions", labels).record(max(0, summary.version - slowest))
            }
        } catch {
            Metrics.Counter(label: "liststore_metrics_store_read_errors_total", factory: factory).increment()
        }
        var text: [UInt8] = []
        registry.emit(into: &text)
        return text
    }

    private func gauge(_ label: String, _ dimensions: [(String, String)] = []) -> Metrics.Gauge {
        Metrics.Gauge(label: label, dimensions: dimensions, factory: factory)
    }
}
