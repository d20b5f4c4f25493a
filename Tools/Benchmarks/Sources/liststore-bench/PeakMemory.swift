#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The peak resident memory of the process.
///
/// On Linux the peak is `VmHWM` of /proc/self/status, which can be reset to the current resident size
/// by writing "5" to /proc/self/clear_refs (Linux ≥ 4.0). On Apple platforms it is `ru_maxrss` of
/// `getrusage`, which cannot be reset: the figure is then the peak of the whole process so far.
enum PeakMemory {
    /// Returns freed memory to the system where the allocator allows it, then resets the peak to the
    /// current resident size. Returns false when the peak could not be reset.
    @discardableResult
    static func reset() -> Bool {
        #if os(Linux)
        trimMalloc()
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let written = "5".utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, 1) }
        return written == 1
        #else
        return false
        #endif
    }

    /// The peak resident size in MiB, or nil when it cannot be read.
    static func peakMB() -> Double? {
        #if os(Linux)
        return peakMB(ofProcess: "self")
        #elseif canImport(Darwin)
        var usage = rusage()
        guard getrusage(RUSAGE_SELF, &usage) == 0 else { return nil }
        return Double(usage.ru_maxrss) / (1024 * 1024)  // bytes on Apple platforms
        #else
        return nil
        #endif
    }

    #if os(Linux)
    /// The peak resident size in MiB of process `pid` (a number, or "self"): its `VmHWM`, or nil
    /// when it cannot be read.
    static func peakMB(ofProcess pid: String) -> Double? {
        guard let status = readFile("/proc/\(pid)/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let digits = line.dropFirst("VmHWM:".count).filter { $0.isNumber }
            guard let kB = Double(String(digits)) else { return nil }
            return kB / 1024
        }
        return nil
    }

    /// glibc's `malloc_trim(0)` (not exported by the Glibc module), looked up at run time.
    private static func trimMalloc() {
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
    }

    private static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
    #endif
}
