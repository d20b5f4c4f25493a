#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
#if os(Linux)
import CEpoll
#endif

/// The followers of http-followers: `count` HTTP/1.1 clients of one journal server on 127.0.0.1, each
/// on a keep-alive TCP connection of its own, all driven by one thread with `epoll` (`poll()` where
/// there is no epoll; raw non-blocking POSIX sockets, no HTTP library).
///
/// Each follower asks `GET /v1/lists/<list>/journal?since=V&cursor=C&limit=100&wait=30` from the last version it
/// has, reads the answer (status line, headers, a `Content-Length` body), takes the versions of its
/// commits, notes for each version it did not have when the answer was complete (see "Two times"),
/// and asks again at once. Each long poll carries `&cursor=C`, as `HTTPSource`'s do: 0, or after an
/// empty answer at the same version the answer's `X-ListStore-Cursor`. A connection the server closes is opened again (counted in
/// `reconnects`); a failed connect or an answer other than 200 is counted in `errors` and retried
/// after 100 ms.
///
/// With `events`, each follower opens one Server-Sent Events stream instead,
/// `GET /v1/lists/<list>/events?since=V`, and takes the version of each event from its `id:` line as
/// the line is complete; a stream that ends is opened again from the last version.
///
/// With `feed` (set-followers), each follower opens one stream of the store feed with a request of
/// its own (its lists and its token: `GET /v1/events?lists=…&since=<cursor>` with a bearer token),
/// and the "version" of an event is its feed position. A user's cursors are sealed (`<uuid>.<epoch>.s…`:
/// no position in them), so the pool reads the position from a `FeedCommitTable`: it takes the
/// list and the entry's `version` from the event's `data:` line and looks the pair up; events the
/// table does not hold (a backlog, a deletion) are passed over. Each follower keeps the cursor text
/// of the last `id:` line it read (a keep-alive's too) and sends it back as it was, as `since`, when
/// it opens its stream again (the first request carries the starting cursor, or no `since`). Each
/// follower gets only its lists' events; `delivered` counts them all.
///
/// Two times: `arrivals` holds when each answer (or event) was complete **at the follower's socket**,
/// which the kernel notes as the data arrives (`SO_TIMESTAMPNS` on Linux: the arrival of the last
/// segment a read took, moved to `CLOCK_MONOTONIC`); `readArrivals` holds when this thread read it.
/// Where the kernel notes nothing (other systems), both are the read time. The thread serves
/// 10,000 followers one after another, so an answer can wait in its socket for the answers of the
/// others to be read first, a wait a follower with a machine of its own does not have; the arrival
/// leaves that wait out. It does not leave out all of the pool's own time: the stamp is the last
/// segment's that a read took, so events that came in one read all get the time of the last (an
/// upper bound for the earlier ones), and a long-polling follower asks again only once its answer
/// is read, so a commit made meanwhile waits for the pool too. Both times are kept, so that
/// reports can give both.
///
/// `run()` is the thread's body; the other thread calls `stop()`, then reads the results once `run()`
/// has returned (`finished` is signalled).
final class HTTPFollowerPool: @unchecked Sendable {
    /// What the other thread may read while the pool runs (under `lock`).
    struct Progress {
        /// The smallest `since` of the requests that are wholly sent and waiting for their answer, or
        /// -1 when some follower has no such request (connecting, sending, between answers).
        var waitingSince = -1
        /// The smallest last version seen by a follower.
        var seen = -1
        var errors = 0
        var reconnects = 0
        /// Answers other than 200 (a part of `errors`).
        var badStatuses = 0
        /// The first few error descriptions.
        var errorSamples: [String] = []
        /// How many arrivals were recorded (of versions from `firstVersion` to `lastVersion`), over
        /// all followers.
        var delivered = 0
        /// The largest last version seen by a follower.
        var latest = -1
    }

    private enum State {
        /// Not connected; (re)connects once `retryAt` has passed.
        case idle
        case connecting
        /// Connected: sending `out` from `sent` on, then reading the answer into `input`.
        case active
    }

    private struct Follower {
        var state = State.idle
        var retryAt: Int64 = 0
        var out: [UInt8] = []
        var sent = 0
        /// The `since` of the request in `out`.
        var since = 0
        var input: [UInt8] = []
        var lastVersion: Int
        /// An event stream whose answer head was read: what follows are events.
        var streaming = false
        /// With `feed`: the cursor to send as `since` (the last `id:` line's text; empty: none).
        var cursor: [UInt8] = []
        /// The cursor of the last long poll, when it ended empty (sent with the next one).
        var longPollCursor: Int?
    }

    let count: Int
    let port: Int
    /// Whether the followers read event streams instead of long polls.
    let events: Bool
    /// The first and last version whose arrival is recorded.
    let firstVersion: Int
    let lastVersion: Int
    /// `arrivals[f * (lastVersion - firstVersion + 1) + (v - firstVersion)]`: when version v was
    /// complete at follower f's socket (MonotonicClock ns; see "Two times"), 0 while it has not
    /// come. Read it only after `finished`.
    private(set) var arrivals: [Int64]
    /// The same as `arrivals`, when this thread read it.
    private(set) var readArrivals: [Int64]
    /// Signalled when `run()` returns.
    let finished = DispatchSemaphore(value: 0)

    private let requestPrefix: [UInt8]
    private let requestSuffix: [UInt8]
    /// Each follower's own request suffix (long polls with a token each), when not `requestSuffix`.
    private let suffixes: [[UInt8]]?
    /// With `feed`: each follower's request before and after its `&since=<cursor>`.
    private let feedRequests: [(prefix: [UInt8], suffix: [UInt8])]?
    /// With `feed`: the feed position of each commit whose arrival counts, by list and version.
    private let feedCommits: FeedCommitTable?
    private var deliveredCount = 0
    private var followers: [Follower]
    /// Each follower's socket and what it waits for (`fd` -1 when it has none).
    private var pollfds: [pollfd]
    /// The followers whose `revents` the last wait set.
    private var readyFollowers: [Int] = []
    #if os(Linux)
    private let epollFD = epoll_create1(0)
    private var epollEvents = [epoll_event](repeating: epoll_event(), count: 1_024)
    #endif
    private var connecting = 0
    /// How many followers are idle, counted at each scan that connects them and raised by each disconnect (1 before the first scan).
    private var idleCount = 1
    private let lock = NSLock()
    private var stopRequested = false
    private var progress = Progress()
    /// Connects started at once at most, so that the server's accept queue does not overflow.
    private static let maxConnecting = 64
    private static let retryNanos: Int64 = 100_000_000
    private static let maxErrorSamples = 5

    /// - Parameters:
    ///   - since: the version every follower starts from (it asks for the commits after it).
    ///   - firstVersion, lastVersion: the versions whose arrivals are recorded.
    ///   - tokens: each long-polling follower's own bearer token (none: no `Authorization`).
    init(count: Int, port: Int, list: String, since: Int, firstVersion: Int, lastVersion: Int, events: Bool = false, tokens: [String]? = nil) {
        self.count = count
        self.port = port
        self.events = events
        self.firstVersion = firstVersion
        self.lastVersion = lastVersion
        arrivals = [Int64](repeating: 0, count: count * (lastVersion - firstVersion + 1))
        readArrivals = arrivals
        let encoded = list.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? list
        if events {
            requestPrefix = Array("GET /v1/lists/\(encoded)/events?since=".utf8)
            requestSuffix = Array(" HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n".utf8)
        } else {
            requestPrefix = Array("GET /v1/lists/\(encoded)/journal?since=".utf8)
            requestSuffix = Array("&limit=100&wait=30 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: application/json\r\n\r\n".utf8)
        }
        suffixes = tokens.map { tokens in
            tokens.map {
                Array("&limit=100&wait=30 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: application/json\r\nAuthorization: Bearer \($0)\r\n\r\n".utf8)
            }
        }
        feedRequests = nil
        feedCommits = nil
        followers = [Follower](repeating: Follower(lastVersion: since), count: count)
        pollfds = [pollfd](repeating: pollfd(fd: -1, events: 0, revents: 0), count: count)
    }

    /// Followers of the store feed: follower f sends `requests[f].prefix` (the request line up to
    /// its query, `GET /v1/events?lists=…`), `&since=` and its cursor when it has one, then
    /// `requests[f].suffix`.
    /// - Parameters:
    ///   - cursor: the cursor every follower starts from, as the server gave it (nil: no `since`,
    ///     from the oldest event the store retains).
    ///   - since: the feed position `cursor` stands at (the events up to it are not recorded).
    ///   - commits: the feed position of each commit, by its list and version; the events of a
    ///     follower's stream that it does not hold are passed over.
    ///   - firstVersion, lastVersion: the feed positions whose arrivals are recorded.
    init(
        port: Int, feedRequests requests: [(prefix: String, suffix: String)], cursor: String?, since: Int, commits: FeedCommitTable,
        firstVersion: Int, lastVersion: Int
    ) {
        count = requests.count
        self.port = port
        events = true
        self.firstVersion = firstVersion
        self.lastVersion = lastVersion
        arrivals = [Int64](repeating: 0, count: requests.count * (lastVersion - firstVersion + 1))
        readArrivals = arrivals
        requestPrefix = []
        requestSuffix = []
        suffixes = nil
        feedRequests = requests.map { (Array($0.prefix.utf8), Array($0.suffix.utf8)) }
        feedCommits = commits
        var start = Follower(lastVersion: since)
        start.cursor = Array((cursor ?? "").utf8)
        followers = [Follower](repeating: start, count: requests.count)
        pollfds = [pollfd](repeating: pollfd(fd: -1, events: 0, revents: 0), count: requests.count)
    }

    /// What the followers have done so far.
    var current: Progress {
        lock.lock()
        defer { lock.unlock() }
        return progress
    }

    /// Makes `run()` close the connections and return.
    func stop() {
        lock.lock()
        stopRequested = true
        lock.unlock()
    }

    private var shouldStop: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopRequested
    }

    // MARK: - The loop

    func run() {
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        var errors = 0, reconnects = 0, badStatuses = 0
        var samples = [String]()
        func error(_ f: Int, _ text: String) {
            errors += 1
            if samples.count < Self.maxErrorSamples { samples.append("follower \(f): \(text)") }
        }

        // The scans over every follower (to connect the idle ones, to publish the progress) are
        // made at most once a millisecond: 10,000 followers scanned at each wake-up of `epoll`
        // would cost the followers more than reading their answers.
        var nextScan: Int64 = 0
        while !shouldStop {
            var now = MonotonicClock.nanoseconds()
            let scan = now >= nextScan
            if scan {
                nextScan = now + 1_000_000
                publish(errors: errors, reconnects: reconnects, badStatuses: badStatuses, samples: samples)
            }
            if scan && idleCount > 0 {
                for f in 0..<count where followers[f].state == .idle && followers[f].retryAt <= now && connecting < Self.maxConnecting {
                    if let failure = startConnect(f) {
                        error(f, failure)
                        followers[f].retryAt = now + Self.retryNanos
                    }
                }
                idleCount = followers.lazy.filter { $0.state == .idle }.count
            }
            let ready = waitForEvents(timeoutMs: 10)
            if ready < 0 && errno != EINTR {
                error(-1, "poll: \(String(cString: strerror(errno)))")
                break
            }
            if ready > 0 {
                for f in readyFollowers where pollfds[f].fd >= 0 && pollfds[f].revents != 0 {
                    let revents = pollfds[f].revents
                    pollfds[f].revents = 0
                    now = MonotonicClock.nanoseconds()
                    switch followers[f].state {
                    case .idle:
                        continue
                    case .connecting:
                        connecting -= 1
                        followers[f].state = .active
                        var code: Int32 = 0
                        var length = socklen_t(MemoryLayout<Int32>.size)
                        getsockopt(pollfds[f].fd, SOL_SOCKET, SO_ERROR, &code, &length)
                        if code != 0 {
                            error(f, "connect: \(String(cString: strerror(code)))")
                            disconnect(f, retryAt: now + Self.retryNanos)
                            continue
                        }
                        if let failure = request(f) {
                            error(f, failure)
                            disconnect(f, retryAt: now + Self.retryNanos)
                        }
                    case .active:
                        if revents & Int16(POLLOUT) != 0, let failure = sendRequest(f) {
                            error(f, failure)
                            disconnect(f, retryAt: now + Self.retryNanos)
                            continue
                        }
                        guard revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 else { continue }
                        // Read what is there, then take the complete answers.
                        var closed = false, failure: String?
                        var arrived: Int64 = 0
                        while true {
                            let n = receive(pollfds[f].fd, into: &scratch, arrival: &arrived)
                            if n > 0 {
                                followers[f].input.append(contentsOf: scratch[0..<n])
                                if n < scratch.count { break }
                            } else if n == 0 {
                                closed = true
                                break
                            } else {
                                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { break }
                                failure = "recv: \(String(cString: strerror(errno)))"
                                break
                            }
                        }
                        now = MonotonicClock.nanoseconds()
                        let at = Time(arrival: arrived > 0 ? min(arrived, now) : now, read: now)
                        var reconnect = false, badStatus = false
                        if events {
                            switch readEvents(f, at: at) {
                            case nil:
                                break
                            case .some(let status) where status == 0:
                                failure = "invalid answer head"
                            case .some(let status):
                                badStatuses += 1
                                badStatus = true
                                reconnect = true
                                error(f, "status \(status)")
                            }
                        }
                        answers: while !events {
                            switch Self.parseResponse(followers[f].input) {
                            case .incomplete:
                                break answers
                            case .invalid(let why):
                                failure = "invalid answer: \(why)"
                                break answers
                            case .complete(let status, let body, let end, let close, let cursor):
                                if status == 200 {
                                    let before = followers[f].lastVersion
                                    deliver(f, body: followers[f].input[body], at: at)
                                    followers[f].longPollCursor = followers[f].lastVersion == before ? cursor : nil
                                } else {
                                    badStatuses += 1
                                    badStatus = true
                                    error(f, "status \(status): "
                                        + String(decoding: followers[f].input[body].prefix(200), as: UTF8.self))
                                }
                                followers[f].input.removeSubrange(0..<end)
                                if close || status != 200 {
                                    reconnect = true
                                    break answers
                                }
                                if let sendFailure = request(f) {
                                    failure = sendFailure
                                    break answers
                                }
                            }
                        }
                        if let failure {
                            error(f, failure)
                            disconnect(f, retryAt: now + Self.retryNanos)
                        } else if reconnect {
                            // After an error status, or when the server said it closes the connection.
                            disconnect(f, retryAt: badStatus ? now + Self.retryNanos : now)
                        } else if closed {
                            // The server closed the connection: open another and ask again.
                            reconnects += 1
                            disconnect(f, retryAt: now)
                        }
                    }
                }
            }
        }
        for f in 0..<count where pollfds[f].fd >= 0 { disconnect(f, retryAt: .max) }
        publish(errors: errors, reconnects: reconnects, badStatuses: badStatuses, samples: samples)
        #if os(Linux)
        _ = close(epollFD)
        #endif
        finished.signal()
    }

    private func publish(errors: Int, reconnects: Int, badStatuses: Int, samples: [String]) {
        var waitingSince = Int.max, seen = Int.max, latest = -1
        for follower in followers {
            seen = min(seen, follower.lastVersion)
            latest = max(latest, follower.lastVersion)
            let waiting = follower.state == .active && follower.sent == follower.out.count && !follower.out.isEmpty
                && (!events || follower.streaming)
            waitingSince = min(waitingSince, waiting ? follower.since : -1)
        }
        lock.lock()
        progress = Progress(
            waitingSince: waitingSince, seen: seen, errors: errors, reconnects: reconnects, badStatuses: badStatuses,
            errorSamples: samples, delivered: deliveredCount, latest: latest)
        lock.unlock()
    }

    /// When what a read took was complete at the socket, and when it was read (MonotonicClock ns).
    private struct Time {
        var arrival: Int64
        var read: Int64
    }

    /// Records the arrival of the commits of an answer's body and moves the follower's version on.
    private func deliver(_ f: Int, body: ArraySlice<UInt8>, at time: Time) {
        for version in Self.commitVersions(in: body) { deliver(f, version: version, at: time) }
    }

    /// Records the arrival of `version` at follower `f` (unless it had it) and moves its version on.
    private func deliver(_ f: Int, version: Int, at time: Time) {
        guard version > followers[f].lastVersion else { return }
        let span = lastVersion - firstVersion + 1
        followers[f].lastVersion = version
        if version >= firstVersion && version <= lastVersion && arrivals[f * span + version - firstVersion] == 0 {
            arrivals[f * span + version - firstVersion] = time.arrival
            readArrivals[f * span + version - firstVersion] = time.read
            deliveredCount += 1
        }
    }

    /// An event stream's bytes so far: its answer head first (nil once it is read and says 200; the
    /// status otherwise, 0 for a head that does not parse), then every complete line, taking the
    /// version of each `id:` line (chunk sizes and other lines are skipped; `data:` holds JSON on
    /// one line). With `feed`: the feed position of each `data:` line's commit (`feedCommits`), and
    /// the last `id:` line's cursor as the follower's.
    private func readEvents(_ f: Int, at time: Time) -> Int? {
        if !followers[f].streaming {
            let input = followers[f].input
            let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")
            guard input.count >= 4,
                let end = (0...(input.count - 4)).first(where: {
                    input[$0] == cr && input[$0 + 1] == lf && input[$0 + 2] == cr && input[$0 + 3] == lf
                })
            else { return nil }
            guard input.count >= 12, input.starts(with: "HTTP/1.".utf8), let status = Self.integer(input[9..<12]) else { return 0 }
            guard status == 200 else { return status }
            followers[f].input.removeSubrange(0..<(end + 4))
            followers[f].streaming = true
        }
        guard let last = followers[f].input.lastIndex(of: UInt8(ascii: "\n")) else { return nil }
        let (idPrefix, dataPrefix) = (Self.idPrefix, Self.dataPrefix)
        var start = 0
        var versions: [Int] = []
        // With `feed`: where the last `id:` line's cursor is in the input.
        var cursor: Range<Int>?
        followers[f].input.withUnsafeBufferPointer { bytes in
            for i in 0...last where bytes[i] == UInt8(ascii: "\n") {
                let line = bytes[start..<i]
                start = i + 1
                if let commits = feedCommits {
                    // A user's cursor is sealed: it is kept as it is, and the data tells the commit.
                    if line.starts(with: idPrefix) {
                        let from = line.startIndex + idPrefix.count
                        var end = from
                        while end < line.endIndex, Self.isCursorByte(line[end]) { end += 1 }
                        cursor = from..<end
                    } else if line.starts(with: dataPrefix) {
                        let data = UnsafeBufferPointer(rebasing: line.dropFirst(dataPrefix.count))
                        if let commit = Self.feedEventCommit(in: data),
                            let position = commits.position(list: UnsafeBufferPointer(rebasing: data[commit.list]), version: commit.version)
                        {
                            versions.append(position)
                        }
                    }
                    continue
                }
                guard line.starts(with: idPrefix) else { continue }
                var value = 0, digits = 0
                for byte in line.dropFirst(idPrefix.count) {
                    guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                    digits += 1
                }
                if digits > 0 { versions.append(value) }
            }
        }
        for version in versions { deliver(f, version: version, at: time) }
        if let cursor, !cursor.isEmpty {
            // Into the follower's buffer (no allocation once it holds a cursor); the slice ends
            // here, before the input is cut.
            do {
                let text = followers[f].input[cursor]
                followers[f].cursor.removeAll(keepingCapacity: true)
                followers[f].cursor.append(contentsOf: text)
            }
        }
        followers[f].input.removeSubrange(0...last)
        followers[f].since = followers[f].lastVersion
        return nil
    }

    // MARK: - Sockets

    /// Starts a non-blocking connect to 127.0.0.1:port; returns what failed, or nil.
    private func startConnect(_ f: Int) -> String? {
        #if os(Linux)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return "socket: \(String(cString: strerror(errno)))" }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        #if os(Linux)
        _ = cepoll_note_arrivals(fd)
        #endif
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        watch(f, fd: fd, events: Int16(POLLOUT))
        if result == 0 {
            followers[f].state = .active
            if let failure = request(f) {
                disconnect(f, retryAt: 0)
                return failure
            }
            return nil
        }
        guard errno == EINPROGRESS else {
            let text = "connect: \(String(cString: strerror(errno)))"
            disconnect(f, retryAt: 0)
            return text
        }
        followers[f].state = .connecting
        connecting += 1
        return nil
    }

    /// Queues the next long poll (from the follower's last version), or opens its stream again
    /// (with `feed`: from its last cursor), and sends what it can of it; returns what failed, or nil.
    private func request(_ f: Int) -> String? {
        followers[f].since = followers[f].lastVersion
        let (prefix, suffix) = feedRequests?[f] ?? (requestPrefix, suffixes?[f] ?? requestSuffix)
        // Written into the follower's buffer: this runs for every answer.
        followers[f].out.removeAll(keepingCapacity: true)
        followers[f].out.append(contentsOf: prefix)
        if feedRequests == nil {
            followers[f].out.append(contentsOf: String(followers[f].lastVersion).utf8)
            if !events {
                followers[f].out.append(contentsOf: Self.cursorParameter)
                followers[f].out.append(contentsOf: String(followers[f].longPollCursor ?? 0).utf8)
            }
        } else if !followers[f].cursor.isEmpty {
            // The cursor the server gave last, as it was (a user's is sealed: no position in it).
            followers[f].out.append(contentsOf: Self.sinceParameter)
            let cursor = followers[f].cursor
            followers[f].out.append(contentsOf: cursor)
        }
        followers[f].out.append(contentsOf: suffix)
        followers[f].sent = 0
        return sendRequest(f)
    }

    /// Sends the rest of the request; returns what failed, or nil. (SIGPIPE is ignored by the
    /// scenario, so a send to a closed connection fails with EPIPE.)
    private func sendRequest(_ f: Int) -> String? {
        while followers[f].sent < followers[f].out.count {
            let fd = pollfds[f].fd
            let sent = followers[f].sent
            let n = followers[f].out.withUnsafeBytes {
                send(fd, $0.baseAddress! + sent, $0.count - sent, 0)
            }
            if n > 0 {
                followers[f].sent += n
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                break
            } else {
                return "send: \(String(cString: strerror(errno)))"
            }
        }
        watch(f, fd: pollfds[f].fd, events: Int16(followers[f].sent < followers[f].out.count ? POLLIN | POLLOUT : POLLIN))
        return nil
    }

    // MARK: - Readiness (epoll on Linux: poll() walks all 1,000 sockets on every wake)

    /// Sets what `f`'s socket `fd` is watched for (a new socket, or new events for the same one;
    /// nothing when it is already watched for them).
    private func watch(_ f: Int, fd: Int32, events: Int16) {
        guard pollfds[f].fd != fd || pollfds[f].events != events else { return }
        #if os(Linux)
        let added = pollfds[f].fd != fd
        var event = epoll_event()
        event.events = UInt32(UInt16(bitPattern: events))
        event.data.u64 = UInt64(f)
        _ = epoll_ctl(epollFD, added ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event)
        #endif
        pollfds[f] = pollfd(fd: fd, events: events, revents: 0)
    }

    /// Waits up to `timeoutMs` for sockets to be ready, sets their `revents` and `readyFollowers`;
    /// returns how many are ready, or -1 (with `errno`).
    private func waitForEvents(timeoutMs: Int32) -> Int32 {
        #if os(Linux)
        let ready = epoll_wait(epollFD, &epollEvents, Int32(epollEvents.count), timeoutMs)
        readyFollowers.removeAll(keepingCapacity: true)
        for k in 0..<max(0, Int(ready)) {
            let f = Int(epollEvents[k].data.u64)
            pollfds[f].revents = Int16(truncatingIfNeeded: epollEvents[k].events)
            readyFollowers.append(f)
        }
        return ready
        #else
        let ready = poll(&pollfds, nfds_t(pollfds.count), timeoutMs)
        readyFollowers = ready > 0 ? Array(0..<count) : []
        return ready
        #endif
    }

    /// `recv` into `buffer`; where the kernel notes when the bytes read arrived, sets `arrival` to
    /// that time (see "Two times"); bytes read without a note set it to 0 (the read time then).
    private func receive(_ fd: Int32, into buffer: inout [UInt8], arrival: inout Int64) -> Int {
        #if os(Linux)
        var noted: Int64 = 0
        let n = buffer.withUnsafeMutableBytes { cepoll_recv_noting_arrival(fd, $0.baseAddress, $0.count, &noted) }
        if n > 0 { arrival = noted }
        return n
        #else
        return buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        #endif
    }

    private func disconnect(_ f: Int, retryAt: Int64) {
        if followers[f].state == .connecting { connecting -= 1 }
        if pollfds[f].fd >= 0 { _ = close(pollfds[f].fd) }
        pollfds[f] = pollfd(fd: -1, events: 0, revents: 0)
        followers[f].state = .idle
        idleCount += 1
        followers[f].retryAt = retryAt
        followers[f].out = []
        followers[f].sent = 0
        followers[f].streaming = false
        followers[f].input.removeAll(keepingCapacity: true)
    }

    // MARK: - HTTP and JSON

    enum Response: Equatable {
        case incomplete
        case invalid(String)
        /// `body` and `end` index the bytes given; `close` when the server says `Connection: close`;
        /// `cursor`: its `X-ListStore-Cursor`.
        case complete(status: Int, body: Range<Int>, end: Int, close: Bool, cursor: Int?)
    }

    /// Parses an HTTP/1.1 answer with a `Content-Length` body at the start of `bytes`, on the bytes
    /// (no strings: the pool parses 20,000 answers a second on a machine the servers share).
    static func parseResponse(_ bytes: [UInt8]) -> Response {
        let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")
        guard bytes.count >= 4 else { return .incomplete }
        var headerEnd = -1
        for i in 0...(bytes.count - 4) where bytes[i] == cr && bytes[i + 1] == lf && bytes[i + 2] == cr && bytes[i + 3] == lf {
            headerEnd = i
            break
        }
        guard headerEnd >= 0 else { return bytes.count > 64 << 10 ? .invalid("no end of headers in 64 KiB") : .incomplete }
        /// The end of the line that starts at `start` (its CR, or the end of the headers).
        func lineEnd(from start: Int) -> Int {
            var i = start
            while i < headerEnd && !(bytes[i] == cr && bytes[i + 1] == lf) { i += 1 }
            return i
        }
        // "HTTP/1.x NNN reason"
        let statusLine = bytes[0..<lineEnd(from: 0)]
        let s = statusLine.startIndex
        guard statusLine.count >= 12, statusLine.starts(with: "HTTP/1.".utf8), statusLine[s + 8] == UInt8(ascii: " "),
            let status = integer(statusLine[(s + 9)..<(s + 12)])
        else {
            return .invalid("status line \(String(decoding: statusLine, as: UTF8.self).debugDescription)")
        }
        var length: Int?
        var cursor: Int?
        var close = statusLine[s + 7] == UInt8(ascii: "0")
        var lineStart = statusLine.endIndex + 2
        while lineStart < headerEnd {
            let line = lineStart..<lineEnd(from: lineStart)
            lineStart = line.upperBound + 2
            guard let colon = bytes[line].firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = bytes[line.lowerBound..<colon]
            var valueStart = colon + 1, valueEnd = line.upperBound
            while valueStart < valueEnd, bytes[valueStart] == UInt8(ascii: " ") || bytes[valueStart] == UInt8(ascii: "\t") { valueStart += 1 }
            while valueEnd > valueStart, bytes[valueEnd - 1] == UInt8(ascii: " ") || bytes[valueEnd - 1] == UInt8(ascii: "\t") { valueEnd -= 1 }
            let value = bytes[valueStart..<valueEnd]
            if equalsIgnoringCase(name, "content-length") {
                length = integer(value)
            } else if equalsIgnoringCase(name, "x-liststore-cursor") {
                cursor = integer(value)
            } else if equalsIgnoringCase(name, "transfer-encoding"), !equalsIgnoringCase(value, "identity") {
                return .invalid("transfer-encoding \(String(decoding: value, as: UTF8.self))")
            } else if equalsIgnoringCase(name, "connection") {
                let lower = value.map(asciiLowercased)
                close = contains(lower, "close") ? true : (contains(lower, "keep-alive") ? false : close)
            }
        }
        guard let length, length >= 0 else { return .invalid("no content-length") }
        let bodyStart = headerEnd + 4
        guard bytes.count >= bodyStart + length else { return .incomplete }
        return .complete(status: status, body: bodyStart..<(bodyStart + length), end: bodyStart + length, close: close, cursor: cursor)
    }

    /// The decimal number `digits` spells (digits only), or nil.
    private static func integer(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    /// Whether `bytes` spell `lowercase` in any case (ASCII).
    private static func equalsIgnoringCase(_ bytes: ArraySlice<UInt8>, _ lowercase: StaticString) -> Bool {
        let utf8 = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        return bytes.count == utf8.count && zip(bytes, utf8).allSatisfy { asciiLowercased($0) == $1 }
    }

    private static func contains(_ bytes: [UInt8], _ token: StaticString) -> Bool {
        let utf8 = Array(UnsafeBufferPointer(start: token.utf8Start, count: token.utf8CodeUnitCount))
        return bytes.indices.contains { bytes[$0...].starts(with: utf8) }
    }

    private static let idPrefix = Array("id: ".utf8)
    private static let dataPrefix = Array("data: ".utf8)
    private static let sinceParameter = Array("&since=".utf8)
    private static let cursorParameter = Array("&cursor=".utf8)

    /// Whether `byte` may be in a feed cursor (`<uuid>.<epoch>.<place>`: hex digits, dashes, dots,
    /// base64url).
    static func isCursorByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    /// The list (where its name is in `data`, between its quotes, as written) and the entry's
    /// `version` of one event of the store feed, `{"entry":{…,"version":V},"list":"…",…}`: a scan
    /// that follows strings and nesting, so that only the top-level `list` and the `version` of the
    /// object one level in (the entry; not `parentVersion`, nor anything inside `stages`) are
    /// taken. nil for a deletion (`{"deleted":true,"list":…}`: no entry) or anything else.
    static func feedEventCommit(in data: UnsafeBufferPointer<UInt8>) -> (list: Range<Int>, version: Int)? {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), colon = UInt8(ascii: ":")
        var list: Range<Int>?
        var version: Int?
        var depth = 0
        var i = data.startIndex
        // Depth 1 is the event, 2 its entry.
        while i < data.endIndex {
            switch data[i] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                i += 1
            case quote:
                var end = i + 1
                while end < data.endIndex && data[end] != quote {
                    end += data[end] == backslash ? 2 : 1
                }
                guard end + 1 < data.endIndex else { return nil }
                let isKey = data[end + 1] == colon
                if isKey, depth == 1, data[(i + 1)..<end].elementsEqual("list".utf8), end + 2 < data.endIndex, data[end + 2] == quote {
                    var close = end + 3
                    while close < data.endIndex && data[close] != quote {
                        close += data[close] == backslash ? 2 : 1
                    }
                    guard close < data.endIndex else { return nil }
                    list = (end + 3)..<close
                    i = close + 1
                } else if isKey, depth == 2, data[(i + 1)..<end].elementsEqual("version".utf8) {
                    var j = end + 2, value = 0, digits = 0
                    while j < data.endIndex, data[j] >= UInt8(ascii: "0"), data[j] <= UInt8(ascii: "9") {
                        value = value * 10 + Int(data[j] - UInt8(ascii: "0"))
                        digits += 1
                        j += 1
                    }
                    if digits > 0 { version = value }
                    i = j
                } else {
                    i = end + 1
                }
            default:
                i += 1
            }
        }
        guard let list, let version else { return nil }
        return (list, version)
    }

    /// The `version` members of the objects of the top-level `commits` array of a journal document:
    /// a scan that follows strings and nesting, so that `parentVersion` and anything inside `stages`
    /// is not taken.
    static func commitVersions(in body: ArraySlice<UInt8>) -> [Int] {
        body.withUnsafeBufferPointer { commitVersions(in: $0) }
    }

    private static func commitVersions(in body: UnsafeBufferPointer<UInt8>) -> [Int] {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        let key = Array("version".utf8)
        var versions = [Int]()
        var depth = 0
        var i = body.startIndex
        // Depth 1 is the document, 2 the commits array, 3 a commit object.
        while i < body.endIndex {
            let byte = body[i]
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                i += 1
            case quote:
                var end = i + 1
                while end < body.endIndex && body[end] != quote {
                    end += body[end] == backslash ? 2 : 1
                }
                guard end < body.endIndex else { return versions }
                if depth == 3, body[(i + 1)..<end].elementsEqual(key), end + 1 < body.endIndex, body[end + 1] == UInt8(ascii: ":") {
                    var j = end + 2, value = 0, digits = 0
                    while j < body.endIndex, body[j] >= UInt8(ascii: "0"), body[j] <= UInt8(ascii: "9") {
                        value = value * 10 + Int(body[j] - UInt8(ascii: "0"))
                        digits += 1
                        j += 1
                    }
                    if digits > 0 { versions.append(value) }
                    i = j
                } else {
                    i = end + 1
                }
            default:
                i += 1
            }
        }
        return versions
    }
}
