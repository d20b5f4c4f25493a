import Foundation

/// Reads an input file (or standard input for `-`) with the documented failures.
enum InputFile {
    /// The bytes of `path`; `-` reads standard input.
    ///
    /// - Throws: `CommandFailure` with exit code 66 when the file is missing, a directory or unreadable.
    static func read(_ path: String) throws -> [UInt8] {
        if path == "-" {
            return [UInt8](FileHandle.standardInput.readDataToEndOfFile())
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CommandFailure("cannot open \(Output.quoted(path)): no such file", status: ExitStatus.missingInput)
        }
        guard !isDirectory.boolValue else {
            throw CommandFailure("cannot read \(Output.quoted(path)): it is a directory", status: ExitStatus.missingInput)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure("cannot read \(Output.quoted(path)): permission denied or unreadable", status: ExitStatus.missingInput)
        }
        return [UInt8](data)
    }
}
