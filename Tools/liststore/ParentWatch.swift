// Both executables compile this one file: Tools/liststore-server/ParentWatch.swift is a symbolic
// link to it (no library target both of them depend on is the place for it).
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `LISTSTORE_PARENT_PID=<pid>`: the process that starts `liststore` or `liststore-server` asks it
/// to end when that process ends, however it ends (SIGKILL too), so that no child of a killed test
/// run or supervisor keeps running.
///
/// At start, a process whose parent is no longer that pid exits at once (status 1). Otherwise a
/// thread waits for the parent to end: on Linux in `poll()` on a pidfd of the parent (`pidfd_open`,
/// Linux 5.3), elsewhere, or when the kernel refuses a pidfd, by checking `getppid()` every second.
/// When the parent has ended, the process sends itself SIGTERM, which ends it as SIGTERM always does
/// (`liststore-server` and `pull`/`sync --follow` shut down gracefully and exit 0; other commands
/// end at once); one that is still running `grace` seconds later exits with status 1.
/// (PR_SET_PDEATHSIG would not do: it fires when the *thread* that forked the child ends.)
enum ParentWatch {
    static let variable = "LISTSTORE_PARENT_PID"

    /// How long a graceful shutdown may take once the parent has ended.
    static let grace: UInt32 = 10

    /// Why `start()` refused to go on: one line for stderr and the exit status.
    struct Refusal: Error {
        var message: String
        var status: Int32
    }

    /// Starts watching the parent named by `LISTSTORE_PARENT_PID`, when it is set.
    /// - Throws: `Refusal` with status 64 when the variable is not a process id, and with status 1
    ///   when that process is no longer this one's parent (it has ended).
    static func start() throws(Refusal) {
        guard let value = getenv(variable).map({ String(cString: $0) }), !value.isEmpty else { return }
        guard let parent = pid_t(value), parent > 0 else {
            throw Refusal(message: "\(variable) must be a process id (a positive integer)", status: 64)
        }
        // The pidfd first, then the check: a pidfd opened while `parent` is still this process's
        // parent is a pidfd of the parent, not of a process that reused its pid.
        let descriptor = openPidfd(parent)
        guard getppid() == parent else {
            if descriptor >= 0 { close(descriptor) }
            throw Refusal(message: "process \(parent) (\(variable)) is no longer this process's parent: it has ended", status: 1)
        }
        let watcher = Thread {
            waitForExit(of: parent, descriptor: descriptor)
            kill(getpid(), SIGTERM)
            sleep(grace)
            _exit(1)
        }
        watcher.name = "parent watch"
        watcher.start()
    }

    /// Returns once `parent` is no longer this process's parent.
    private static func waitForExit(of parent: pid_t, descriptor: Int32) {
        if descriptor >= 0 {
            // A pidfd polls readable once its process has ended.
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            while poll(&entry, 1, -1) < 0, errno == EINTR {}
        }
        // The check that ends the wait, and the whole wait without a pidfd.
        while getppid() == parent { sleep(1) }
    }

    /// A pidfd of `pid` (close-on-exec), or -1 where there is none: not Linux, a kernel before 5.3,
    /// or a sandbox that refuses the call.
    private static func openPidfd(_ pid: pid_t) -> Int32 {
        #if os(Linux)
        // `syscall` is variadic, which Swift does not import: it is called through a non-variadic
        // pointer, as the Linux calling conventions allow for integer arguments.
        typealias Syscall = @convention(c) (CLong, CLong, CLong) -> CLong
        let pidfdOpen: CLong = 434  // SYS_pidfd_open, the same number on every architecture
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "syscall") else { return -1 }
        let result = unsafeBitCast(symbol, to: Syscall.self)(pidfdOpen, CLong(pid), 0)
        return result >= 0 ? Int32(result) : -1
        #else
        return -1
        #endif
    }
}
