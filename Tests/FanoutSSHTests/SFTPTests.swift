import FanoutSSH
import Foundation
import Testing

extension FleetTests {
    @Suite(.timeLimit(.minutes(10))) struct SFTP {
        private var workdir: String { "\(TestFleet.directory)/agents/agent-1/work" }

        @Test func uploadKeepsEveryByte() async throws {
            let connection = try await TestFleet.connect(1)
            let local = TemporaryDirectory()
            let size = 5 * 1024 * 1024 + 12345 // not a multiple of the 256 KiB write size
            try await Shell.check("head -c \(size) /dev/urandom > \(local.path)/random.bin")
            let localSum = try await Shell.check("sha256sum < \(local.path)/random.bin")
                .split(separator: " ")[0]
            let remote = "\(workdir)/sftp-\(UUID().uuidString).bin"

            let start = now()
            let sent = try await connection.upload(local.path + "/random.bin", to: remote, mode: 0o640)
            let elapsed = now() - start
            #expect(sent == size)
            let remoteSum = try await connection.run("sha256sum < \(remote)").stdoutText.split(separator: " ")[0]
            #expect(remoteSum == localSum)
            let attributes = try await connection.stat(remote)
            #expect(attributes?.size == UInt64(size))
            #expect(attributes.map { $0.mode.map { $0 & 0o777 } } == 0o640)
            #expect(attributes?.isRegularFile == true)
            print(String(format: "SFTP upload of %.1f MiB: %@, %.0f MB/s", Double(size) / 1048576,
                         milliseconds(elapsed), Double(size) / elapsed / 1e6))
            try await connection.remove(remote)
            #expect(try await connection.stat(remote) == nil)
            await connection.close()
        }

        /// The SFTP pieces of an atomic install (FanoutAgents' `SSHConnection.install` adds the shell fallback).
        @Test func mkdirIsIdempotentAndRenameRefusesToOverwrite() async throws {
            let connection = try await TestFleet.connect(1)
            let local = TemporaryDirectory()
            let dir = "\(workdir)/install-\(UUID().uuidString)/nested/deeper"
            try await connection.mkdir(dir, intermediate: true)
            try await connection.mkdir(dir, intermediate: true) // existing: fine
            #expect(try await connection.stat(dir)?.isDirectory == true)

            try "first\n".write(toFile: local.path + "/a", atomically: true, encoding: .utf8)
            let target = dir + "/tool"
            try await connection.upload(local.path + "/a", to: dir + "/part", mode: 0o755)
            try await connection.rename(dir + "/part", to: target)
            #expect(try await connection.run("cat \(target)").stdoutText == "first\n")
            #expect(try await connection.stat(target)?.mode.map { $0 & 0o777 } == 0o755)

            // Plain SFTP rename refuses to overwrite (SFTP v3) and says so.
            do {
                try await connection.upload(local.path + "/a", to: dir + "/other")
                try await connection.rename(dir + "/other", to: target)
                Issue.record("rename over an existing file should fail")
            } catch {
                guard case .sftpFailed(_, let operation, _, _) = error else {
                    Issue.record("expected sftpFailed, got \(error)")
                    return
                }
                #expect(operation == "rename")
            }
            _ = try await connection.run("rm -rf \(workdir)/install-*")
            await connection.close()
        }

        @Test func sftpErrorsNameTheOperationAndPath() async throws {
            let connection = try await TestFleet.connect(1)
            do {
                try await connection.upload("/etc/hostname", to: "/proc/forbidden/file")
                Issue.record("upload into /proc should fail")
            } catch {
                guard case .sftpFailed(_, "upload", "/proc/forbidden/file", _) = error else {
                    Issue.record("expected sftpFailed, got \(error)")
                    return
                }
            }
            do {
                try await connection.upload("/nonexistent/local", to: "\(workdir)/x")
                Issue.record("upload of a missing file should fail")
            } catch {
                guard case .localFileFailed(let path, _) = error else {
                    Issue.record("expected localFileFailed, got \(error)")
                    return
                }
                #expect(path == "/nonexistent/local")
            }
            // The connection and its SFTP session still work.
            #expect(try await connection.stat("/") != nil)
            await connection.close()
        }

        @Test func commandsRunWhileUploading() async throws {
            let connection = try await TestFleet.connect(1)
            let local = TemporaryDirectory()
            try await Shell.check("head -c 20000000 /dev/urandom > \(local.path)/big.bin")
            let remote = "\(workdir)/parallel-\(UUID().uuidString).bin"
            async let upload = connection.upload(local.path + "/big.bin", to: remote)
            var latencies: [Double] = []
            for _ in 0..<10 {
                let start = now()
                _ = try await connection.run("true")
                latencies.append(now() - start)
            }
            #expect(try await upload == 20_000_000)
            print("exec latency during a 20 MB upload: median \(milliseconds(percentiles(latencies).median))")
            try await connection.remove(remote)
            await connection.close()
        }
    }
}
