import FanoutSSH
import Foundation
import Testing

/// Every test that talks to the local fleet lives under this one serialized suite: the fleet is shared, fault tests
/// signal the sshd process of "their" connection, and the timings printed are not disturbed by parallel tests.
@Suite(.serialized, .timeLimit(.minutes(10))) struct FleetTests {}

extension FleetTests {
    @Suite(.timeLimit(.minutes(10))) struct HostKeys {
        /// Connecting to agent 1 with `knownHosts`, expecting failure.
        private func connectError(knownHosts: String, policy: HostKeyPolicy) async throws -> SSHError {
            do {
                let connection = try await TestFleet.connect(1, options: TestFleet.options(knownHosts: knownHosts, policy: policy))
                await connection.close()
                Issue.record("connected although the host key should have been refused")
                throw TestFleet.FleetError(description: "connected")
            } catch let error as SSHError {
                return error
            }
        }

        private func expectedFingerprint(_ agent: Int) async throws -> String {
            let output = try await Shell.check(
                "ssh-keygen -l -E sha256 -f \(TestFleet.directory)/agents/agent-\(agent)/ssh_host_ed25519_key.pub")
            // "256 SHA256:xxxx comment (ED25519)"
            return String(output.split(separator: " ")[1])
        }

        @Test func unknownHostIsRefusedWithFingerprintAndLineToAdd() async throws {
            try await TestFleet.shared.ensureStarted()
            let dir = TemporaryDirectory()
            let knownHosts = dir.path + "/known_hosts"
            try "# empty\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)

            let error = try await connectError(knownHosts: knownHosts, policy: .strict)
            guard case let .unknownHostKey(endpoint, fingerprint, keyType, path, line) = error else {
                Issue.record("expected unknownHostKey, got \(error)")
                return
            }
            let hostKey = try TestFleet.hostPublicKey(1).split(separator: " ")
            #expect(endpoint == TestFleet.endpoint(1))
            #expect(fingerprint == (try await expectedFingerprint(1)))
            #expect(keyType == "ssh-ed25519")
            #expect(path == knownHosts)
            #expect(line == "[127.0.1.1]:\(TestFleet.port) ssh-ed25519 \(hostKey[1])")
            #expect(error.description.contains(fingerprint))
            #expect(error.description.contains(line))
            // Strict never writes.
            #expect(try String(contentsOfFile: knownHosts, encoding: .utf8) == "# empty\n")
            print("unknown host message:\n\(error)")
        }

        @Test func changedKeyIsRefusedEvenWithAcceptNew() async throws {
            try await TestFleet.shared.ensureStarted()
            let dir = TemporaryDirectory()
            let knownHosts = dir.path + "/known_hosts"
            // Agent 2's key recorded for agent 1: agent 1 now presents "another" key.
            let otherKey = try TestFleet.hostPublicKey(2).split(separator: " ")
            let content = "# a comment\n[127.0.1.1]:\(TestFleet.port) \(otherKey[0]) \(otherKey[1])\n"
            try content.write(toFile: knownHosts, atomically: true, encoding: .utf8)

            for policy in HostKeyPolicy.allCases {
                let error = try await connectError(knownHosts: knownHosts, policy: policy)
                guard case let .hostKeyChanged(_, fingerprint, keyType, _, line) = error else {
                    Issue.record("expected hostKeyChanged under \(policy), got \(error)")
                    continue
                }
                #expect(fingerprint == (try await expectedFingerprint(1)))
                #expect(keyType == "ssh-ed25519")
                #expect(line == 2)
                #expect(error.description.contains("HAS CHANGED"))
                #expect(error.description.contains("ssh-keygen -R"))
            }
            #expect(try String(contentsOfFile: knownHosts, encoding: .utf8) == content, "known_hosts must be untouched")
        }

        @Test func acceptNewRecordsTheKeyAndStrictAcceptsItAfterwards() async throws {
            try await TestFleet.shared.ensureStarted()
            let dir = TemporaryDirectory()
            let knownHosts = dir.path + "/known_hosts" // does not exist yet

            let first = try await TestFleet.connect(1, options: TestFleet.options(knownHosts: knownHosts, policy: .acceptNew))
            #expect(first.notes.contains { $0.contains("recorded") && $0.contains(first.hostKeyFingerprint) })
            #expect(try await first.run("echo hi").stdoutText == "hi\n")
            await first.close()

            let recorded = try String(contentsOfFile: knownHosts, encoding: .utf8)
            let hostKey = try TestFleet.hostPublicKey(1).split(separator: " ")
            #expect(recorded == "[127.0.1.1]:\(TestFleet.port) ssh-ed25519 \(hostKey[1])\n")

            let second = try await TestFleet.connect(1, options: TestFleet.options(knownHosts: knownHosts, policy: .strict))
            #expect(second.hostKeyFingerprint == first.hostKeyFingerprint)
            #expect(second.notes.isEmpty)
            await second.close()
            // OpenSSH agrees with what we wrote.
            let ssh = await Shell.run(
                "ssh -F /dev/null -i \(TestFleet.identity) -o IdentitiesOnly=yes -o BatchMode=yes "
                    + "-o UserKnownHostsFile=\(knownHosts) -o GlobalKnownHostsFile=/dev/null "
                    + "-o StrictHostKeyChecking=yes -p \(TestFleet.port) \(TestFleet.user)@127.0.1.1 echo ok")
            #expect(ssh.status == 0, "\(ssh.output)")
        }

        @Test func hashedKnownHostsEntriesWork() async throws {
            try await TestFleet.shared.ensureStarted()
            let dir = TemporaryDirectory()
            let knownHosts = dir.path + "/known_hosts"
            try FileManager.default.copyItem(atPath: TestFleet.knownHosts, toPath: knownHosts)
            try await Shell.check("ssh-keygen -H -f \(knownHosts) && rm -f \(knownHosts).old")
            let hashed = try String(contentsOfFile: knownHosts, encoding: .utf8)
            #expect(hashed.hasPrefix("|1|"))
            #expect(!hashed.contains("127.0.1.1"))

            let connection = try await TestFleet.connect(1, options: TestFleet.options(knownHosts: knownHosts))
            #expect(try await connection.run("echo hashed").stdoutText == "hashed\n")
            await connection.close()
        }

        @Test func linesLibssh2CannotParseAreSkippedNotFatal() async throws {
            try await TestFleet.shared.ensureStarted()
            let dir = TemporaryDirectory()
            let knownHosts = dir.path + "/known_hosts"
            let valid = try String(contentsOfFile: TestFleet.knownHosts, encoding: .utf8)
            let content = "example.org sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIA==\n"
                + "not-a-known-hosts-line\n"
                + "@cert-authority *.example.org ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE4515hSMtXjn92z4vvqy+itKDiSQKA1Dsc89kUQ8NeP\n"
                + valid
            try content.write(toFile: knownHosts, atomically: true, encoding: .utf8)
            let connection = try await TestFleet.connect(1, options: TestFleet.options(knownHosts: knownHosts))
            #expect(connection.notes.contains { $0.contains("skipped lines") && $0.contains("2") })
            #expect(try await connection.run("echo parsed").stdoutText == "parsed\n")
            await connection.close()
        }

        @Test func knownTypeNotOfferedIsRefused() async throws {
            try await TestFleet.shared.ensureStarted()
            let dir = TemporaryDirectory()
            let knownHosts = dir.path + "/known_hosts"
            // An ECDSA key on record for a host that only has an ed25519 key.
            try await Shell.check("ssh-keygen -q -t ecdsa -N '' -f \(dir.path)/fake_ecdsa")
            let fake = try String(contentsOfFile: dir.path + "/fake_ecdsa.pub", encoding: .utf8).split(separator: " ")
            try "[127.0.1.1]:\(TestFleet.port) \(fake[0]) \(fake[1])\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
            let error = try await connectError(knownHosts: knownHosts, policy: .acceptNew)
            guard case let .hostKeyTypeNotOffered(_, knownTypes, _, _) = error else {
                Issue.record("expected hostKeyTypeNotOffered, got \(error)")
                return
            }
            #expect(knownTypes == ["ecdsa-sha2-nistp256"])
        }
    }
}
