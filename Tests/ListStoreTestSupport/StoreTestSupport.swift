import Foundation
import ListDiff
import ListDiffTestSupport
import ListStore

/// A directory that is removed when the value goes away.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("liststore-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

extension ListItem {
    /// A test item whose content is the JSON number `content`.
    public init(_ id: String, _ content: Int = 0) {
        self.init(id: id, content: Array(String(content).utf8))
    }
}

/// Converts the diff tests' random snapshots into store snapshots (contents become JSON numbers).
public func listSections(_ snapshot: TestSnapshot) -> [ListSection] {
    snapshot.map { section in
        ListSection(
            model: ListItem(section.model.id, section.model.content),
            elements: section.elements.map { ListItem($0.id, $0.content) })
    }
}

/// `count` elements "e0", "e1", … (contents `content`, `content + 1`, …) in one section "s".
public func linearList(_ count: Int, prefix: String = "e", content: Int = 0) -> [ListSection] {
    [ListSection(model: ListItem("s"), elements: (0..<count).map { ListItem("\(prefix)\($0)", $0 + content) })]
}
