// doc-examples: the Swift code blocks of the project's Markdown (README.md and the DocC articles)
// as Swift sources, so that the `DocExamplesTests` target compiles every example the docs show.
//
//   doc-examples OUTPUT_DIRECTORY ROOT MARKDOWN=NAME...
//
// For each Markdown file (a path below ROOT), one Swift file NAME.swift holding the enum NAME:
// the blocks' type declarations become its nested types, their other lines (in order, the blocks
// of one file being one program, each block in a scope nested in the one before) the body of its
// `run()` — `async` unless no block awaits — and their imports go to the top of the file. A block
// that imports SwiftUI or UIKit is compiled apart, only where those exist (`#if canImport`), and
// the others everywhere. OUTPUT_DIRECTORY also gets `DocExampleIndex.swift`: each file's path and
// how many blocks were taken from it, which the tests check against the Markdown itself.
import Foundation

struct Example {
    var imports: [String] = []
    var declarations: [String] = []
    /// Each block's statements in a scope nested in the previous block's: a block sees what the
    /// blocks before it declared, and may declare the same names again.
    var statements: [String] = []
    var blocks = 0
    /// The blocks that import SwiftUI or UIKit, each compiled only where that framework is, apart
    /// from the others: the frameworks, the declarations, the statements.
    var platformBlocks: [(frameworks: [String], imports: [String], declarations: [String], statements: [String])] = []
}

/// The UI frameworks a block imports, of those that only Apple platforms have.
func platformFrameworks(of block: [String]) -> [String] {
    ["SwiftUI", "UIKit"].filter { block.contains("import \($0)") }
}

/// The code of each ```swift fenced block of `text`, its common indentation removed.
func swiftBlocks(of text: String) -> [[String]] {
    var blocks: [[String]] = []
    var current: [String]?
    var fenceIndent = 0
    for line in text.components(separatedBy: "\n") {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if current == nil {
            if trimmed == "```swift" {
                current = []
                fenceIndent = line.prefix { $0 == " " }.count
            }
        } else if trimmed == "```" {
            blocks.append(current!)
            current = nil
        } else {
            current!.append(String(line.dropFirst(min(fenceIndent, line.prefix { $0 == " " }.count))))
        }
    }
    return blocks
}

/// Whether a line at the block's margin starts a type declaration (attributes and modifiers first).
func startsTypeDeclaration(_ line: String) -> Bool {
    var words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    while let first = words.first, first.hasPrefix("@") || ["public", "final", "private", "fileprivate", "internal", "nonisolated"].contains(first) {
        words.removeFirst()
    }
    guard let keyword = words.first else { return false }
    return ["struct", "enum", "class", "actor", "protocol", "typealias"].contains(keyword)
}

func example(of blocks: [[String]]) -> Example {
    var example = Example()
    var nested = 0
    for block in blocks {
        example.blocks += 1
        let frameworks = platformFrameworks(of: block)
        if !frameworks.isEmpty {
            var platform = Example()
            classify(block, into: &platform)
            example.platformBlocks.append((frameworks, platform.imports, platform.declarations, platform.statements))
            continue
        }
        if nested > 0 || example.statements.contains(where: { !$0.isEmpty }) {
            example.statements.append("do {")
            nested += 1
        }
        classify(block, into: &example)
    }
    example.statements += Array(repeating: "}", count: nested)
    return example
}

/// Sorts a block's lines into `example`'s imports, declarations and statements.
func classify(_ block: [String], into example: inout Example) {
    var inDeclaration = false
    for line in block {
        let atMargin = !line.isEmpty && !line.hasPrefix(" ") && !line.hasPrefix("\t")
        if atMargin && line.hasPrefix("import ") {
            if !example.imports.contains(line) { example.imports.append(line) }
            inDeclaration = false
            continue
        }
        if atMargin && !line.hasPrefix("}") && !line.hasPrefix(")") && !line.hasPrefix("]") {
            inDeclaration = startsTypeDeclaration(line)
        }
        if inDeclaration { example.declarations.append(line) } else { example.statements.append(line) }
    }
}

func indented(_ lines: [String], by indent: String) -> String {
    lines.map { $0.isEmpty ? "" : indent + $0 }.joined(separator: "\n")
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: doc-examples OUTPUT_DIRECTORY ROOT MARKDOWN=NAME...\n".utf8))
    exit(64)
}
let output = URL(fileURLWithPath: arguments[arguments.startIndex])
let root = URL(fileURLWithPath: arguments[arguments.startIndex + 1]).standardizedFileURL.path
var index: [(path: String, blocks: Int)] = []
do {
    try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
    for argument in arguments.dropFirst(2) {
        guard let equals = argument.lastIndex(of: "=") else { throw CocoaError(.fileReadInvalidFileName) }
        let type = String(argument[argument.index(after: equals)...])
        let full = URL(fileURLWithPath: String(argument[..<equals])).standardizedFileURL.path
        let path = full.hasPrefix(root + "/") ? String(full.dropFirst(root.count + 1)) : full
        let text = try String(contentsOfFile: full, encoding: .utf8)
        let example = example(of: swiftBlocks(of: text))
        index.append((path, example.blocks))
        let awaits = example.statements.contains { $0.contains("await ") }
        var source = "// Generated by doc-examples from \(path): its Swift code blocks, compiled. Do not edit.\n"
        source += example.imports.joined(separator: "\n") + "\n\n"
        source += "enum \(type) {\n"
        if !example.declarations.isEmpty { source += indented(example.declarations, by: "    ") + "\n\n" }
        source += "    static func run() \(awaits ? "async " : "")throws {\n"
        source += indented(example.statements, by: "        ") + "\n    }\n}\n"
        for (k, block) in example.platformBlocks.enumerated() {
            let condition = block.frameworks.map { "canImport(\($0))" }.joined(separator: " && ")
            source += "\n#if \(condition)\n" + block.imports.joined(separator: "\n") + "\n\n"
            source += "extension \(type) {\n"
            if !block.declarations.isEmpty { source += indented(block.declarations, by: "    ") + "\n\n" }
            let blockAwaits = block.statements.contains { $0.contains("await ") }
            source += "    static func runPlatformBlock\(k)() \(blockAwaits ? "async " : "")throws {\n"
            source += indented(block.statements, by: "        ") + "\n    }\n}\n#endif\n"
        }
        try source.write(to: output.appendingPathComponent("\(type).swift"), atomically: true, encoding: .utf8)
    }
    var registry = "// Generated by doc-examples: the Markdown files whose Swift code blocks are compiled. Do not edit.\n"
    registry += "let docExampleIndex: [(path: String, blocks: Int)] = [\n"
    registry += index.map { "    (\(String(reflecting: $0.path)), \($0.blocks))," }.joined(separator: "\n")
    registry += "\n]\n"
    try registry.write(to: output.appendingPathComponent("DocExampleIndex.swift"), atomically: true, encoding: .utf8)
} catch {
    FileHandle.standardError.write(Data("doc-examples: \(error)\n".utf8))
    exit(1)
}
