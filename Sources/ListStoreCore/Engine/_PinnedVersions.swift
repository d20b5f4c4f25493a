/// The states a driver keeps for paged reads (ListStoreCore's article "Lists of Any Size"): the
/// first page of a list larger than one page is read in a state of the store the driver can keep
/// (SQLite: a snapshot connection; memory: the tables), and the pages after it are read there, so
/// that a paged read stays at its version while commits land.
///
/// A pin is kept while it is used: one unused for `idle`, or older than `maxAge`, is let go, and
/// beyond `capacity` pins the least recently used goes first (a read of its version then goes on at
/// the head, and starts again there once the head has moved). Every pin of a version is shared by
/// all the readers of that version; a list deleted and made again to the same version replaces the
/// pin of the one before (a reader of that one then gets pages of another list identity, which a
/// replica refuses). Pins are let go of outside the table's lock (`_LetGo`).
///
/// Not API: package-visible for the drivers.
package final class _PinnedVersions<Pin: Sendable>: Sendable {
    private struct Key: Hashable {
        var list: String
        var version: Int
    }

    private struct Entry {
        var pin: Pin
        /// The identity of the list pinned (a list deleted and made again may reach its version).
        var listID: String?
        var made: ContinuousClock.Instant
        var used: ContinuousClock.Instant
    }

    private let entries = _Locked([Key: Entry]())
    private let capacity: Int
    private let idle: Duration
    private let maxAge: Duration

    /// - Parameters: capacity: the most pins kept; idle, maxAge: how long an unused pin, and any
    ///   pin, is kept.
    package init(capacity: Int = 8, idle: Duration = .seconds(60), maxAge: Duration = .seconds(600)) {
        (self.capacity, self.idle, self.maxAge) = (max(1, capacity), idle, maxAge)
    }

    /// The pin of the list `listID` named `list` at `version`, marked used; `nil` when there is
    /// none (or one of another list of that name).
    /// - Complexity: O(pins).
    package func pin(of list: String, at version: Int, listID: String?) -> Pin? {
        let now = ContinuousClock.now
        let (pin, expired) = entries.withLock { entries -> (Pin?, [Pin]) in
            let expired = Self.sweep(&entries, now: now, idle: idle, maxAge: maxAge)
            let key = Key(list: list, version: version)
            guard let entry = entries[key], entry.listID == listID else { return (nil, expired) }
            entries[key]?.used = now
            return (entry.pin, expired)
        }
        Self.release(expired)
        return pin
    }

    /// Whether a pin of a list named `list` at `version` is kept (of any list of that name): a read
    /// that finds none need not ask which list the name is now. Lets go of the pins unused for
    /// `idle` or older than `maxAge`, as every look at the table does.
    /// - Complexity: O(pins).
    package func holds(_ list: String, at version: Int) -> Bool {
        let now = ContinuousClock.now
        let (held, expired) = entries.withLock { entries -> (Bool, [Pin]) in
            let expired = Self.sweep(&entries, now: now, idle: idle, maxAge: maxAge)
            return (entries[Key(list: list, version: version)] != nil, expired)
        }
        Self.release(expired)
        return held
    }

    /// Keeps `pin` as the state of the list `listID` named `list` at `version`, in place of a pin
    /// of another list of that name (unless one of that list is kept already: then that one is
    /// returned, and `pin` let go), letting the least recently used go beyond `capacity`.
    /// - Complexity: O(pins).
    package func keep(_ pin: Pin, of list: String, at version: Int, listID: String?) -> Pin {
        let now = ContinuousClock.now
        let (kept, released) = entries.withLock { entries in
            var released = Self.sweep(&entries, now: now, idle: idle, maxAge: maxAge)
            let key = Key(list: list, version: version)
            if let existing = entries[key] {
                if existing.listID == listID { return (existing.pin, released + [pin]) }
                released.append(existing.pin)
            }
            entries[key] = Entry(pin: pin, listID: listID, made: now, used: now)
            while entries.count > capacity, let oldest = entries.min(by: { $0.value.used < $1.value.used }) {
                released.append(entries.removeValue(forKey: oldest.key)!.pin)
            }
            return (pin, released)
        }
        Self.release(released)
        return kept
    }

    /// Lets every pin go.
    package func removeAll() {
        let released = entries.withLock { entries in
            defer { entries.removeAll() }
            return entries.values.map(\.pin)
        }
        Self.release(released)
    }

    /// Lets `pins` go (`_LetGo`): closing a connection (or freeing a copy of the tables) never
    /// holds a thread that runs tasks.
    private static func release(_ pins: [Pin]) {
        guard !pins.isEmpty else { return }
        _LetGo.later(pins)
    }

    /// Removes the pins unused for `idle` or older than `maxAge`, and returns them.
    private static func sweep(_ entries: inout [Key: Entry], now: ContinuousClock.Instant, idle: Duration, maxAge: Duration) -> [Pin] {
        let gone = entries.filter { now - $0.value.used > idle || now - $0.value.made > maxAge }
        for key in gone.keys { entries.removeValue(forKey: key) }
        return gone.values.map(\.pin)
    }
}
