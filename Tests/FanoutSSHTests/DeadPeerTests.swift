import FanoutSSH
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension FleetTests {
    /// Faults injected into the per-connection sshd processes of agent 2 (children of its master sshd, whose PID
    /// is in the fleet dir). Signals go to PIDs we found, never to names.
    @Suite(.timeLimit(.minutes(10))) struct DeadPeer {
        /// Connects to agent 2 and returns the connection and the PIDs of its per-connection sshd process tree.
        private func connectAndFindServerProcesses(
            deadPeerTimeout: Double
        ) async throws -> (SSHConnection, pid_t) {
            try await TestFleet.shared.ensureStarted()
            let master = try TestFleet.masterPID(2)
            let before = Set(ProcessTree.children(of: master))
            let connection = try await TestFleet.connect(2, options: TestFleet.options(deadPeerTimeout: deadPeerTimeout))
            for _ in 0..<100 {
                let new = Set(ProcessTree.children(of: master)).subtracting(before)
                if new.count == 1, let pid = new.first { return (connection, pid) }
                if new.count > 1 { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            await connection.close()
            throw TestFleet.FleetError(description: "cannot tell which sshd child serves the test connection")
        }

        /// Starts a long silent command and waits until it runs.
        private func startSilentCommand(
            _ connection: SSHConnection
        ) async throws -> AsyncStream<SSHExecEvent>.AsyncIterator {
            var iterator = connection.execute("echo running; exec sleep 30").makeAsyncIterator()
            guard case .stdout = await iterator.next() else {
                throw TestFleet.FleetError(description: "the command did not start")
            }
            return iterator
        }

        private func lastEvent(_ iterator: inout AsyncStream<SSHExecEvent>.AsyncIterator) async -> SSHExecEvent? {
            var last: SSHExecEvent?
            while let event = await iterator.next() { last = event }
            return last
        }

        @Test func killedServerEndsRunningCommandsAtOnce() async throws {
            let (connection, serverPID) = try await connectAndFindServerProcesses(deadPeerTimeout: 8)
            var iterator = try await startSilentCommand(connection)
            let victims = [serverPID] + ProcessTree.descendants(of: serverPID)
            let start = now()
            for pid in victims { kill(pid, SIGKILL) }
            let last = await lastEvent(&iterator)
            let elapsed = now() - start
            guard case .failed(.connectionLost) = last else {
                Issue.record("expected .failed(.connectionLost), got \(String(describing: last))")
                return
            }
            // Noticed from the dropped connection, long before the 8 s dead-peer timeout could say so (scripts/bench.sh
            // reports how fast; a bound here is correctness, not speed).
            #expect(elapsed < 5, "took \(elapsed) s")
            #expect(!connection.isAlive)
            await connection.close()
        }

        @Test func frozenServerIsDeclaredDeadAfterTheDeadPeerTimeout() async throws {
            let deadPeerTimeout = 3.0
            let (connection, serverPID) = try await connectAndFindServerProcesses(deadPeerTimeout: deadPeerTimeout)
            var iterator = try await startSilentCommand(connection)
            let victims = [serverPID] + ProcessTree.descendants(of: serverPID)
            defer {
                for pid in victims { kill(pid, SIGCONT) }
                // The command would sleep on after the thaw; it is ours to stop.
                for pid in victims.reversed() { kill(pid, SIGKILL) }
            }
            let start = now()
            for pid in victims { kill(pid, SIGSTOP) }
            let last = await lastEvent(&iterator)
            let elapsed = now() - start
            guard case .failed(.connectionLost(_, let reason)) = last else {
                Issue.record("expected .failed(.connectionLost), got \(String(describing: last))")
                return
            }
            #expect(reason.contains("keepalive"))
            #expect(elapsed >= deadPeerTimeout - 1.1, "declared dead too early: \(elapsed) s")
            #expect(elapsed <= deadPeerTimeout + 15, "declared dead, by its keepalive deadline: \(elapsed) s")
            #expect(!connection.isAlive)
            await connection.close()
        }

        @Test func frozenServerIsNoticedOnAnIdleConnectionToo() async throws {
            let deadPeerTimeout = 3.0
            let (connection, serverPID) = try await connectAndFindServerProcesses(deadPeerTimeout: deadPeerTimeout)
            let victims = [serverPID] + ProcessTree.descendants(of: serverPID)
            defer {
                for pid in victims { kill(pid, SIGCONT) }
            }
            let start = now()
            for pid in victims { kill(pid, SIGSTOP) }
            while connection.isAlive && now() - start < deadPeerTimeout + 15 {
                try await Task.sleep(for: .milliseconds(50))
            }
            let elapsed = now() - start
            #expect(!connection.isAlive)
            #expect(elapsed <= deadPeerTimeout + 15, "took \(elapsed) s")
            // Requests on a dead connection fail at once.
            do {
                _ = try await connection.run("true")
                Issue.record("run on a dead connection should fail")
            } catch {
                guard case .connectionLost = error else {
                    Issue.record("expected connectionLost, got \(error)")
                    return
                }
            }
            await connection.close()
        }
        @Test func frozenListenerTimesOutTheHandshakeAndCancelStopsAConnect() async throws {
            try await TestFleet.shared.ensureStarted()
            let master = try TestFleet.masterPID(2)
            kill(master, SIGSTOP) // the kernel still completes TCP handshakes; sshd never sends its banner
            defer { kill(master, SIGCONT) }

            var options = TestFleet.options()
            options.connectTimeout = 1
            var start = now()
            do {
                let connection = try await SSHConnection.connect(
                    to: TestFleet.endpoint(2), authentication: .keyFile(path: TestFleet.identity, passphrase: nil),
                    options: options)
                await connection.close()
                Issue.record("connected to a frozen sshd")
            } catch {
                let elapsed = now() - start
                guard case .connectTimedOut(_, let phase, _) = error else {
                    Issue.record("expected connectTimedOut, got \(error)")
                    return
                }
                #expect(phase == "SSH handshake")
                #expect(elapsed >= 0.9 && elapsed < 10, "its 1 s connect deadline, not the 30 s default: \(elapsed) s")
            }

            options.connectTimeout = 30
            start = now()
            let attempt = Task {
                try await SSHConnection.connect(
                    to: TestFleet.endpoint(2), authentication: .keyFile(path: TestFleet.identity, passphrase: nil),
                    options: options)
            }
            try await Task.sleep(for: .milliseconds(200))
            attempt.cancel()
            do {
                _ = try await attempt.value
                Issue.record("the cancelled connect succeeded")
            } catch {
                #expect(error as? SSHError == .cancelled)
                #expect(now() - start < 10, "cancelled, long before the 30 s connect deadline")
            }
        }
    }

    @Suite(.timeLimit(.minutes(10))) struct Measurements {
        @Test func connectAndExecLatency() async throws {
            try await TestFleet.shared.ensureStarted()
            var connects: [SSHConnectTimings] = []
            var wall: [Double] = []
            for _ in 0..<5 {
                let start = now()
                let connection = try await TestFleet.connect(1)
                wall.append(now() - start)
                connects.append(connection.connectTimings)
                await connection.close()
            }
            let connection = try await TestFleet.connect(1)
            var start = now()
            _ = try await connection.run("true")
            let first = now() - start
            var latencies: [Double] = []
            for _ in 0..<50 {
                start = now()
                let result = try await connection.run("true")
                latencies.append(now() - start)
                #expect(result.succeeded)
            }
            let (median, p99) = percentiles(latencies)
            let total = percentiles(connects.map(\.total)).median
            print("""
                connect+auth (median of 5): total \(milliseconds(total)) = tcp \(milliseconds(percentiles(connects.map(\.tcpConnect)).median)) \
                + handshake \(milliseconds(percentiles(connects.map(\.handshake)).median)) \
                + auth \(milliseconds(percentiles(connects.map(\.authentication)).median)) \
                + first channel \(milliseconds(percentiles(connects.map(\.firstChannel)).median)); \
                as seen by the caller \(milliseconds(percentiles(wall).median))
                exec `true`: first on a new connection \(milliseconds(first)); then 50 runs median \(milliseconds(median)), \
                p99 \(milliseconds(p99))
                """)
            await connection.close()
        }

        @Test func outputThroughputAndParallelConnections() async throws {
            let connection = try await TestFleet.connect(1)
            let size = 100_000_000
            var received = 0
            let start = now()
            for await event in connection.execute("head -c \(size) /dev/zero") {
                if case .stdout(let bytes) = event { received += bytes.count }
            }
            let elapsed = now() - start
            #expect(received == size)
            print(String(format: "stdout throughput: %.0f MB in %@ = %.0f MB/s", Double(size) / 1e6,
                         milliseconds(elapsed), Double(size) / elapsed / 1e6))
            await connection.close()

            // 16 connections at once (8 per agent), each with its own I/O thread.
            let burst = now()
            let outputs = try await withThrowingTaskGroup(of: String.self) { group in
                for i in 0..<16 {
                    group.addTask {
                        let connection = try await TestFleet.connect(1 + i % 2)
                        let output = try await connection.run("echo \(i)").stdoutText
                        await connection.close()
                        return output
                    }
                }
                var all: [String] = []
                for try await output in group { all.append(output) }
                return all
            }
            #expect(Set(outputs) == Set((0..<16).map { "\($0)\n" }))
            print("16 parallel connect + run + close: \(milliseconds(now() - burst))")
        }
    }
}
