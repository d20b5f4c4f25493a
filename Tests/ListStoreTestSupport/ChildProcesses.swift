import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Process {
    /// Makes a `liststore` or `liststore-server` child end with the test process, however that ends
    /// (SIGKILL too): its environment (the one set so far, or this process's) gets
    /// `LISTSTORE_PARENT_PID` set to this process's pid. Call it after setting `environment` and
    /// before `run()`.
    public func endsWithTestProcess() {
        var environment = self.environment ?? ProcessInfo.processInfo.environment
        environment["LISTSTORE_PARENT_PID"] = String(getpid())
        self.environment = environment
    }

    /// `run()`, once this process holds few enough file descriptors for it. On Linux, Foundation's
    /// `Process.run()` of Swift 6.3 lists `/proc/self/fd` and copies each entry's whole 256-byte
    /// name field, reading past glibc's 32 KiB listing buffer when the listing fills it (about 1,350
    /// descriptors), which crashes the test process when the next page is not mapped
    /// (swift-corelibs-foundation pull request 5472). Tests that hold hundreds of connections run
    /// beside the ones that start children, so a start waits (up to a minute) until the process
    /// holds at most 1,000. Every test that starts a process starts it with this.
    public func runWhenDescriptorsAllow() throws {
        #if os(Linux)
        let deadline = ContinuousClock.now + .seconds(60)
        while Self.openDescriptors() > 1_000, ContinuousClock.now < deadline { usleep(10_000) }
        #endif
        try run()
    }

    #if os(Linux)
    /// The number of this process's open file descriptors: the entries of `/proc/self/fd`, counted
    /// without reading their names.
    private static func openDescriptors() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while readdir(directory) != nil { count += 1 }
        return count - 2  // "." and ".."
    }
    #endif
}

/// Waiting for processes that are not children of the test process (so `waitpid` cannot).
public enum ProcessExit {
    /// Waits until process `pid` has ended, up to `timeout`; returns whether it has. On Linux it
    /// waits in `poll()` on a pidfd of the process (readable once it has ended, even while it is a
    /// zombie nobody reaps); elsewhere it checks `kill(pid, 0)` every 10 ms.
    public static func wait(for pid: pid_t, timeout: Duration) -> Bool {
        #if os(Linux)
        typealias Syscall = @convention(c) (CLong, CLong, CLong) -> CLong
        if let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "syscall") {
            let descriptor = unsafeBitCast(symbol, to: Syscall.self)(434, CLong(pid), 0)  // SYS_pidfd_open
            if descriptor >= 0 {
                defer { close(Int32(descriptor)) }
                var entry = pollfd(fd: Int32(descriptor), events: Int16(POLLIN), revents: 0)
                let clock = ContinuousClock()
                let deadline = clock.now + timeout
                while true {
                    let left = clock.now.duration(to: deadline)
                    let milliseconds = max(0, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
                    let ready = poll(&entry, 1, Int32(min(milliseconds, Int64(Int32.max))))
                    if ready > 0 { return true }
                    if ready == 0 { return false }
                    if errno != EINTR { break }
                }
            } else if errno == ESRCH {
                return true  // no such process: it has ended and was reaped
            }
        }
        #endif
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while kill(pid, 0) == 0 || errno == EPERM {
            if clock.now >= deadline { return false }
            usleep(10_000)
        }
        return true
    }
}
