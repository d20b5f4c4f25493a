import Foundation
import PackagePlugin

/// Compiles the Swift code blocks of README.md and of every DocC article (`Sources/*/*.docc/*.md`)
/// into the target it is applied to (`DocExamplesTests`), through the `doc-examples` tool: an
/// example that no longer compiles fails the build.
@main
struct DocExamples: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let root = context.package.directoryURL
        var articles = [root.appending(path: "README.md")]
        for module in try FileManager.default.contentsOfDirectory(atPath: root.appending(path: "Sources").path).sorted() {
            let sources = root.appending(path: "Sources").appending(path: module)
            for catalog in (try? FileManager.default.contentsOfDirectory(atPath: sources.path))?.sorted() ?? [] where catalog.hasSuffix(".docc") {
                let directory = sources.appending(path: catalog)
                for file in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() where file.hasSuffix(".md") {
                    articles.append(directory.appending(path: file))
                }
            }
        }
        // README.md → DocExample_README; Sources/ListSync/ListSync.docc/ReplicaSets.md → DocExample_ListSync_ReplicaSets.
        let names = articles.map { article in
            let parts = article.path.dropFirst(root.path.count).split(separator: "/").filter { $0 != "Sources" && !$0.hasSuffix(".docc") }
            let joined = parts.joined(separator: "_").replacingOccurrences(of: ".md", with: "")
            return "DocExample_" + String(joined.map { $0.isLetter || $0.isNumber ? $0 : "_" })
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "examples")
        return [
            .buildCommand(
                displayName: "Extracting the documentation's Swift examples",
                executable: try context.tool(named: "doc-examples").url,
                arguments: [output.path, root.path] + zip(articles, names).map { "\($0.path)=\($1)" },
                inputFiles: articles,
                outputFiles: names.map { output.appending(path: "\($0).swift") } + [output.appending(path: "DocExampleIndex.swift")]
            )
        ]
    }
}
