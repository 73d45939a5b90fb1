import FanoutSSH
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension FleetTests {
    @Suite(.timeLimit(.minutes(10))) struct Authentication {
        private func connectError(_ authentication: SSHAuthentication) async throws -> SSHError {
            do {
                let connection = try await TestFleet.connect(1, authentication: authentication)
                await connection.close()
                Issue.record("authentication should have failed")
                throw TestFleet.FleetError(description: "connected")
            } catch let error as SSHError {
                return error
            }
        }

        @Test func keyFileWorksAndReportsTimings() async throws {
            let connection = try await TestFleet.connect(1)
            #expect(connection.isAlive)
            #expect(connection.hostKeyType == "ssh-ed25519")
            #expect(connection.hostKeyFingerprint.hasPrefix("SHA256:"))
            let timings = connection.connectTimings
            #expect(timings.total >= timings.tcpConnect + timings.handshake + timings.authentication)
            await connection.close()
            #expect(!connection.isAlive)
        }

        @Test func wrongKeyFailsWithUserHostPortMethodAndFixes() async throws {
            try await TestFleet.shared.ensureStarted()
            let dir = TemporaryDirectory()
            try await Shell.check("ssh-keygen -q -t ed25519 -N '' -f \(dir.path)/stranger")
            let error = try await connectError(.keyFile(path: dir.path + "/stranger", passphrase: nil))
            guard case let .authenticationFailed(endpoint, method, _) = error else {
                Issue.record("expected authenticationFailed, got \(error)")
                return
            }
            #expect(endpoint == TestFleet.endpoint(1))
            #expect(method.contains(dir.path + "/stranger"))
            #expect(method.contains("ssh-ed25519"))
            let text = error.description
            #expect(text.contains("fanout-agent@127.0.1.1:\(TestFleet.port)"))
            #expect(text.contains("authorized_keys"))
            print("auth failure message:\n\(text)")
        }

        @Test func rsaKeyFailsWithTheReasonAndTheFix() async throws {
            try await TestFleet.shared.ensureStarted()
            let dir = TemporaryDirectory()
            try await Shell.check("ssh-keygen -q -t rsa -b 2048 -N '' -f \(dir.path)/id_rsa")
            // Authorize it, so that the refusal can only come from the signature algorithm.
            let agentKeys = "\(TestFleet.directory)/agents/agent-1/authorized_keys"
            let original = try String(contentsOfFile: agentKeys, encoding: .utf8)
            defer { try? original.write(toFile: agentKeys, atomically: true, encoding: .utf8) }
            let rsaPublic = try String(contentsOfFile: dir.path + "/id_rsa.pub", encoding: .utf8)
            try (original + rsaPublic).write(toFile: agentKeys, atomically: true, encoding: .utf8)

            let error = try await connectError(.keyFile(path: dir.path + "/id_rsa", passphrase: nil))
            guard case .rsaKeyRefused = error else {
                Issue.record("expected rsaKeyRefused, got \(error)")
                return
            }
            #expect(error.description.contains("ssh-keygen -t ed25519"))
            #expect(error.description.contains("SHA-1"))
            print("RSA key message:\n\(error)")
        }

        @Test func passphraseProtectedKey() async throws {
            try await TestFleet.shared.ensureStarted()
            let dir = TemporaryDirectory()
            let passphrase = "correct horse battery staple"
            try await Shell.check("ssh-keygen -q -t ed25519 -N '\(passphrase)' -f \(dir.path)/locked")
            let agentKeys = "\(TestFleet.directory)/agents/agent-1/authorized_keys"
            let original = try String(contentsOfFile: agentKeys, encoding: .utf8)
            defer { try? original.write(toFile: agentKeys, atomically: true, encoding: .utf8) }
            try (original + String(contentsOfFile: dir.path + "/locked.pub", encoding: .utf8))
                .write(toFile: agentKeys, atomically: true, encoding: .utf8)
            let path = dir.path + "/locked"

            let missing = try await connectError(.keyFile(path: path, passphrase: nil))
            guard case .keyFileUnusable = missing else {
                Issue.record("expected keyFileUnusable, got \(missing)")
                return
            }
            #expect(missing.description.contains("passphrase"))

            let wrong = try await connectError(.keyFile(path: path, passphrase: "wrong horse"))
            guard case .keyFileUnusable = wrong else {
                Issue.record("expected keyFileUnusable, got \(wrong)")
                return
            }
            #expect(wrong.description.contains("wrong passphrase"))
            #expect(!wrong.description.contains("wrong horse"), "the passphrase must never appear in messages")

            let connection = try await TestFleet.connect(1, authentication: .keyFile(path: path, passphrase: passphrase))
            #expect(try await connection.run("echo unlocked").stdoutText == "unlocked\n")
            await connection.close()
        }

        @Test func missingKeyFile() async throws {
            try await TestFleet.shared.ensureStarted()
            let error = try await connectError(.keyFile(path: "/nonexistent/id_ed25519", passphrase: nil))
            guard case .keyFileUnusable(let path, _) = error else {
                Issue.record("expected keyFileUnusable, got \(error)")
                return
            }
            #expect(path == "/nonexistent/id_ed25519")
        }

        @Test func sshAgent() async throws {
            try await TestFleet.shared.ensureStarted()
            let dir = TemporaryDirectory()
            let socket = dir.path + "/agent.sock"
            // ssh-agent in the foreground (-D) as a child we own; stopped by its PID.
            let agent = Process()
            agent.executableURL = URL(fileURLWithPath: "/usr/bin/ssh-agent")
            agent.arguments = ["-D", "-a", socket]
            agent.standardOutput = FileHandle.nullDevice
            agent.standardError = FileHandle.nullDevice
            try agent.run()
            defer {
                kill(agent.processIdentifier, SIGKILL) // Foundation spawns it with SIGTERM blocked
                agent.waitUntilExit()
            }
            for _ in 0..<100 where !FileManager.default.fileExists(atPath: socket) {
                try await Task.sleep(for: .milliseconds(20))
            }
            // An empty agent first.
            let empty = try await connectError(.agent(socketPath: socket))
            guard case .agentUnavailable = empty else {
                Issue.record("expected agentUnavailable, got \(empty)")
                return
            }
            try await Shell.check("ssh-add \(TestFleet.identity)", environment: ["SSH_AUTH_SOCK": socket])
            let connection = try await TestFleet.connect(1, authentication: .agent(socketPath: socket))
            #expect(try await connection.run("echo agent").stdoutText == "agent\n")
            await connection.close()

            let nowhere = try await connectError(.agent(socketPath: dir.path + "/no-such.sock"))
            guard case .agentUnavailable = nowhere else {
                Issue.record("expected agentUnavailable, got \(nowhere)")
                return
            }
        }

        @Test func nothingListeningFailsFastAndClearly() async throws {
            try await TestFleet.shared.ensureStarted()
            let start = now()
            do {
                let endpoint = SSHEndpoint(host: "127.0.1.1", port: 2499, user: TestFleet.user)
                let connection = try await SSHConnection.connect(
                    to: endpoint, authentication: .keyFile(path: TestFleet.identity, passphrase: nil),
                    options: TestFleet.options())
                await connection.close()
                Issue.record("connected to a port where nothing listens")
            } catch {
                let elapsed = now() - start
                guard case .connectFailed = error else {
                    Issue.record("expected connectFailed, got \(error)")
                    return
                }
                #expect(error.description.contains("refused"))
                #expect(elapsed < 10, "refused at once, not after a connect deadline: \(elapsed) s")
            }
        }
    }
}
