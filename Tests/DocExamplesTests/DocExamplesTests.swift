import Foundation
import Testing

/// The examples of README.md and the DocC articles are compiled into this target (the `DocExamples`
/// plugin, `Tools/doc-examples`): an example that does not compile fails the build. This checks
/// that none was left out.
@Suite struct DocExamplesTests {
    /// Every Swift fence of every Markdown file the docs publish, counted here from the files.
    @Test func everySwiftBlockOfTheDocsIsCompiled() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var files = ["README.md"]
        let sources = root.appendingPathComponent("Sources")
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
            let moduleURL = sources.appendingPathComponent(module)
            for catalog in (try? FileManager.default.contentsOfDirectory(atPath: moduleURL.path)) ?? [] where catalog.hasSuffix(".docc") {
                for file in try FileManager.default.contentsOfDirectory(atPath: moduleURL.appendingPathComponent(catalog).path)
                where file.hasSuffix(".md") {
                    files.append("Sources/\(module)/\(catalog)/\(file)")
                }
            }
        }
        var fences: [String: Int] = [:]
        for file in files {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            fences[file] = text.components(separatedBy: "\n").filter { line in
                let trimmed = line.trimmingCharacters(in: .whitespaces).lowercased()
                return trimmed.hasPrefix("```") && trimmed.contains("swift")
            }.count
        }
        let compiled = Dictionary(uniqueKeysWithValues: docExampleIndex.map { ($0.path, $0.blocks) })
        #expect(compiled == fences)
        #expect(fences.values.reduce(0, +) >= 25)
    }
}
